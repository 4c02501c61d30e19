// Filters that need no server: hide requirement rows by status and family.
(function () {
  var failed = document.getElementById("filter-failed");
  var family = document.getElementById("filter-family");
  if (!failed || !family) { return; }
  function apply() {
    var rows = document.querySelectorAll("tr[data-status]");
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i];
      var bad = row.getAttribute("data-status") === "failed" ||
                row.getAttribute("data-status") === "error";
      var fam = family.value === "" || row.getAttribute("data-family") === family.value;
      row.hidden = !(fam && (!failed.checked || bad));
    }
    var groups = document.querySelectorAll("section.family");
    for (var j = 0; j < groups.length; j++) {
      groups[j].hidden = groups[j].querySelectorAll("tr[data-status]:not([hidden])").length === 0;
    }
    var shown = document.querySelectorAll("tr[data-status]:not([hidden])").length;
    document.getElementById("filter-count").textContent = shown + " shown";
  }
  failed.addEventListener("change", apply);
  family.addEventListener("change", apply);
  apply();
})();
