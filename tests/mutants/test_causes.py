"""Issues 14 and 21 "Done when": one defect, one diagnosis.

For each one-defect zoo mutant below, a full kit run (quick profile, in a child process):
the first cause names the requirement of the defect (by the diagnosis table, not by test
order), every failed test is inside a cause line, and the requirements that fail only
because of that cause say so ("explained by cause 1"). With ``-x`` the first failing test
is one of that requirement (the tests run after the requirements whose values they carry:
``_pytest/_ordering.item_rank``), and the first cause names it.

The full runs share one kit process (``--rdq-plugin`` repeated); each ``-x`` run is its own.
"""

from __future__ import annotations

import re

import pytest

from ._harness import KitResult, first_failed, run_kit
from .zoo import by_id

pytestmark = [pytest.mark.zoo, pytest.mark.xdist_group("zoo-causes")]

CASES = {
    # mutant: the requirement its first cause must name
    "redis_lpush_attempts": "RDQ-RT-005",  # attempts reversed
    "mysql_strict_utf8mb3": "RDQ-RT-006",  # astral characters refused
    "drop_unknown_top": "RDQ-UF-001",  # unknown top-level fields dropped
    "drop_unknown_error": "RDQ-UF-003",  # unknown error fields dropped
    "mysql_datetime_no_fsp": "RDQ-RT-007",  # timestamps cut to seconds
    "oracle_empty_string_null": "RDQ-RT-010",  # "" read back as null
    "counters_as_decimal": "RDQ-RT-004",  # counters as Decimal
    "insert_on_conflict_do_nothing": "RDQ-ST-001",  # rewrites ignored
    "payload_text_rejects_binary": "RDQ-RT-008",  # non-UTF-8 payloads refused (raises)
    "detail_dropped": "RDQ-UF-006",
    "header_keys_casefold": "RDQ-RT-009",
    "postgres_jsonb_rejects_nul": "RDQ-RT-006",  # refusal only: U+0000 (INTERNAL)
    # 'ID' read into id (or an error: 'ID' holds an object), wherever the trap key is
    "go_case_insensitive_unmarshal": "RDQ-UF-001",
    "t_b64_url": "RDQ-RT-004",  # a testee's invalid wire JSON, in this process and a new one
    "char_pad_space": "RDQ-RT-006",  # trims every string, header keys too
    "header_key_pad_space": "RDQ-RT-009",  # merges header keys, their values intact
    # a column shorter than C1's limit, re-truncated or cut plainly: C1's defect
    "varchar_4095": "RDQ-TR-001",
    "mysql_nonstrict_varchar_4000": "RDQ-TR-001",
    # an id lower-cased: a model defect, though the change has a name (not RDQ-RT-006)
    "id_lowercase": "RDQ-RT-004",
    # the payload kept as text, so that a large one comes back past 1 MiB: RDQ-RT-008
    "payload_as_text": "RDQ-RT-008",
    # a read of an id absent from the namespace (never written, dropped, elsewhere) raises
    "missing_id_raises": "RDQ-ST-002",
    # detail kept as its JSON text: objects read as strings, strings as '"…"'
    "detail_stringified": "RDQ-UF-006",
    # booleans kept as 0/1 wherever they are (detail, unknown fields at every level)
    "mysql_boolean_tinyint": "RDQ-UF-001",
    # nothing kept outside the process: gone after a restart and from a new process
    "durable_claimed_memory_only": "RDQ-RT-003",
    # header keys of earlier versions kept beside each rewrite (HSET without DEL)
    "upsert_merges_headers": "RDQ-ST-001",
    # Go's strings.TrimSpace on the error message and stack, behind the stdio bridge
    "t_trim_space": "RDQ-RT-006",
    # the last 1,000 attempts kept (LTRIM): attempts lost, not reordered
    "redis_ltrim_attempts": "RDQ-RT-005",
    # MongoDB's _id added to every read: an unknown field no version held, not RDQ-ST-001
    "mongodb_id_returned": "RDQ-UF-001",
    # an upsert that keeps the first created_at: the rewrite's defect, not the instant's
    "upsert_keeps_created_at": "RDQ-ST-001",
    # a MIME encoder's line breaks: the read raises, here and in a new process
    "payload_mime_base64": "RDQ-RT-008",
    # {} read as [] at every level (PHP): one of the four empty values for another
    "php_empty_object_as_array": "RDQ-RT-010",
    # namespace names cut to 32 characters: reads leak and drops take, by name alone
    "namespace_cut_32": "RDQ-ST-008",
    # queue and handler_ref cut to VARCHAR(191): a column limit, as the long values' are
    "queue_varchar_191": "RDQ-RT-011",
    # instants kept as Berlin's wall-clock time: the hour clocks fall back reads an hour early
    "dst_fold_local_time": "RDQ-RT-007",
    # a drop that deletes one 1 MiB page of a namespace
    "drop_one_page_1mib": "RDQ-ST-004",
    # an adapter answering from its ORM session: another adapter's rewrite is not seen
    "orm_session_identity_map": "RDQ-ST-001",
    # arrays kept as DynamoDB sets, at every level: one cause, as booleans kept as 0/1
    "dynamodb_string_sets": "RDQ-UF-001",
    # strings holding JSON read back as that JSON, of whatever type: one cause
    "redis_hash_json_loads": "RDQ-UF-001",
    # every snake_case key of unknown fields and detail turned into camelCase: one cause
    "camelcase_keys_deep": "RDQ-UF-001",
    # a refused rewrite that already deleted the earlier version (no transaction)
    "delete_then_insert_autocommit": "RDQ-VER-002",
    # the same, for a rewrite past 1 MiB refused by a packet limit
    "delete_then_insert_packet_limit": "RDQ-ST-005",
    # a drop undone by the namespace's next write: the dropped envelopes come back
    "drop_soft_delete_undone_by_write": "RDQ-ST-004",
    # instants kept as Berlin's wall-clock time, read as PostgreSQL reads an ambiguous one
    "dst_fold_later_offset": "RDQ-RT-007",
    # an unknown field '_id' overwritten by MongoDB's own, and stripped on read
    "mongodb_id_is_the_task_id": "RDQ-UF-001",
    # a reader dereferencing every attempt's error: raises wherever one is null, in this
    # process and in a new one
    "null_error_dereferenced": "RDQ-RT-010",
}
_FULL: list[KitResult] = []
_STOPPED: dict[str, KitResult] = {}


def _full() -> KitResult:
    if not _FULL:
        _FULL.append(run_kit([f"--rdq-plugin={by_id(m).label}" for m in sorted(CASES)],
                             timeout=1500))
    return _FULL[0]


def _stopped(mutant: str) -> KitResult:
    if mutant not in _STOPPED:
        _STOPPED[mutant] = run_kit([f"--rdq-plugin={by_id(mutant).label}"], extra=("-x",),
                                   timeout=600)
    return _STOPPED[mutant]


def _failed_tests(plugin: dict) -> list[str]:
    return [t["nodeid"] for r in plugin["requirements"] for t in r["tests"]
            if t["status"] in ("failed", "error")]


def _section(output: str, label: str) -> list[str]:
    """The terminal lines of one plugin in the rdq compliance summary."""
    lines = output.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(f"plugin {label} ("))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("plugin ")),
               len(lines))
    return lines[start:end]


@pytest.mark.parametrize("mutant", sorted(CASES))
def test_first_cause_names_the_requirement_and_covers_every_failure(mutant: str) -> None:
    requirement = CASES[mutant]
    result = _full()
    label = by_id(mutant).label
    plugin = result.plugin(label)
    failed = _failed_tests(plugin)
    assert failed, result.describe()
    causes = plugin["causes"]
    assert causes[0]["requirement"] == requirement, [
        (c["requirement"], c["kind"], c["failures"]) for c in causes]
    # every failure is inside a cause, and the report says how many there are
    assert sum(c["failures"] for c in causes) == len(failed) == plugin["failures"]
    # the requirements that fail only by the first cause say so
    for r in plugin["requirements"]:
        if r["status"] in ("failed", "error") and r["id"] != requirement and r["causes"] == [1]:
            assert r["explained_by"] == 1, r["id"]
    # the terminal: the headline counts every failure, the first line names the requirement
    section = _section(result.output, label)
    headline = next(ln for ln in section if re.match(r"^  \d+ causes? explains? ", ln))
    assert f" {len(failed)} failure" in headline and "without a cause" not in headline
    first = next(ln for ln in section if ln.startswith("    1. "))
    assert f"\u2192 {requirement} (" in first, first


def test_a_refusal_only_plugin_gets_one_cause_line() -> None:
    """postgres_jsonb_rejects_nul refuses (INTERNAL) every envelope holding U+0000 and
    nothing else: one cause, its trigger named, every failure in it."""
    plugin = _full().plugin(by_id("postgres_jsonb_rejects_nul").label)
    (cause,) = plugin["causes"]
    assert cause["trigger"] == "U+0000 in a string"
    assert "refused" in cause["kind"] and "INTERNAL" in cause["kind"]
    assert cause["failures"] == len(_failed_tests(plugin))


_NOT_STOPPED = {
    "postgres_jsonb_rejects_nul": "its one cause is checked above",
    # One defect at every level of the envelope: -x stops at whichever level's test runs
    # first (UF-003's, before UF-001's); test_first_failure accepts any it declares.
    "go_case_insensitive_unmarshal": "stops on RDQ-UF-003, one of its declared three",
    # Booleans at every level: -x stops at the detail's test (RDQ-UF-006's run first),
    # whose failure the one cause holds; test_first_failure accepts either.
    "mysql_boolean_tinyint": "stops on RDQ-UF-006, the other declared one",
    # Keys restyled at every level: -x stops at the error's plain test (RDQ-UF-003's run
    # before RDQ-UF-001's), whose failure the one cause holds.
    "camelcase_keys_deep": "stops on RDQ-UF-003, the other declared one",
}


@pytest.mark.parametrize("mutant", sorted(set(CASES) - set(_NOT_STOPPED)))
def test_stop_at_first_failure_stops_on_the_requirement(mutant: str) -> None:
    requirement = CASES[mutant]
    result = _stopped(mutant)
    assert result.report is not None, result.describe()
    assert result.report["aborted"] == "after the first failure (-x)"
    plugin = result.plugin(by_id(mutant).label)
    # the first test that failed is one of the requirement's own
    first = first_failed(result)
    owner = {t["nodeid"]: r["id"] for r in plugin["requirements"] for t in r["tests"]}
    assert owner.get(first) == requirement, (first, owner.get(first), result.describe())
    failed = [r for r in plugin["requirements"] if r["status"] in ("failed", "error")]
    assert [r["id"] for r in failed] == [requirement], result.describe()
    assert plugin["causes"][0]["requirement"] == requirement


def test_a_rewrite_by_another_adapter_that_is_not_seen_is_an_earlier_version() -> None:
    """Two adapters on one namespace: the version one of them still returns after the
    other rewrote it is the earlier version read back (C13), whichever adapter wrote
    it, not a string or an instant changed."""
    plugin = _full().plugin(by_id("orm_session_identity_map").label)
    assert [(c["requirement"], c["summary"]) for c in plugin["causes"]] == [
        ("RDQ-ST-001", "the version written before the rewrite came back")]


def test_what_a_new_process_reads_is_diagnosed_as_a_read_here() -> None:
    """The new process of RDQ-RT-003 (C15) reads through the same stdio bridge: its
    verdict on the testee's wire JSON is the kit's own invalid read (RDQ-RT-004), one
    cause with every other read, not an exception diagnosed by what the envelope holds."""
    plugin = _full().plugin(by_id("t_b64_url").label)
    assert [(c["requirement"], c["failures"]) for c in plugin["causes"]] == [
        ("RDQ-RT-004", len(_failed_tests(plugin)))]


def test_unknown_fields_a_decoder_takes_for_known_ones_are_their_levels_causes() -> None:
    """A Go plugin reads the unknown field 'ID' into id (or fails to, when it holds an
    object): every cause names the unknown fields' requirement of its level (C10), none
    the known field's, durability's or the versions' it shows in."""
    plugin = _full().plugin(by_id("go_case_insensitive_unmarshal").label)
    named = {c["requirement"] for c in plugin["causes"]}
    assert named <= {"RDQ-UF-001", "RDQ-UF-002", "RDQ-UF-003"}, plugin["causes"]
    # and each says so: the value of the unknown field it holds, or the trigger
    assert all("unknown field" in c["summary"] for c in plugin["causes"]), plugin["causes"]


@pytest.mark.parametrize("mutant", ["char_pad_space", "header_key_pad_space"])
def test_header_keys_made_one_are_one_cause_of_the_right_defect(mutant: str) -> None:
    """'k', 'k ' and 'k  ' come back as one header key from a store that trims every
    string (its string defect, RDQ-RT-006) and from a PAD SPACE key column (a key lost,
    RDQ-RT-009): one cause each, naming its own requirement."""
    plugin = _full().plugin(by_id(mutant).label)
    assert [(c["requirement"], c["failures"]) for c in plugin["causes"]] == [
        (CASES[mutant], len(_failed_tests(plugin)))], plugin["causes"]


def test_a_store_refusing_one_kind_of_value_is_one_cause_whatever_the_check_wrote() -> None:
    """RDQ-RT-006 (C4): a utf8mb3 column refuses every astral character, in the golden
    fixtures' writes and in the long-value checks, which name the field they wrote before
    the call ("a header key of 255 bytes was refused: write(…)"): one cause, not one per
    field named (seven before the operation was read from the call)."""
    plugin = _full().plugin(by_id("mysql_strict_utf8mb3").label)
    assert [(c["requirement"], c["kind"], c["failures"]) for c in plugin["causes"]] == [
        ("RDQ-RT-006", "write refused: StorageError INTERNAL", len(_failed_tests(plugin)))]


def test_a_store_that_keeps_nothing_is_one_cause_in_every_durability_check() -> None:
    """RDQ-RT-003 (C15): reads after a restart and a new process that found nothing are
    one defect ("not-durable"), not one cause per check's wording."""
    plugin = _full().plugin(by_id("durable_claimed_memory_only").label)
    assert [(c["requirement"], c["failures"]) for c in plugin["causes"]] == [
        ("RDQ-RT-003", len(_failed_tests(plugin)))], plugin["causes"]
    assert len(_failed_tests(plugin)) >= 2


def test_what_a_merging_rewrite_keeps_is_one_cause_wherever_it_shows() -> None:
    """RDQ-ST-001 (C13): header keys of earlier versions read back beside a rewrite, in the
    rewrite checks and in every round trip whose examples shared an id, are one cause
    that says where they came from (not "unexpected header" beside "the version written
    before the rewrite came back")."""
    plugin = _full().plugin(by_id("upsert_merges_headers").label)
    assert [(c["requirement"], c["failures"]) for c in plugin["causes"]] == [
        ("RDQ-ST-001", len(_failed_tests(plugin)))], plugin["causes"]
    assert "before the rewrite" in plugin["causes"][0]["summary"]


def test_a_store_trimming_white_space_is_one_cause_whatever_each_string_ended_with() -> None:
    """RDQ-RT-006 (C4): strings.TrimSpace reads as "trailing spaces trimmed" on a message
    that ended in spaces only and as "white space trimmed" on one with a leading tab: one
    cause (three before the narrower changes joined the wider one)."""
    plugin = _full().plugin(by_id("t_trim_space").label)
    assert [(c["requirement"], c["failures"]) for c in plugin["causes"]] == [
        ("RDQ-RT-006", len(_failed_tests(plugin)))], plugin["causes"]
