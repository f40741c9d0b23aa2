/* agent-eval report: sorting and filtering of the tables (inlined by report.html.j2).
   Plain DOM, no libraries. Only reorders and hides rows that are already in the page. */
(function () {
  "use strict";
  var collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" });

  function key(row, i) {
    var cell = row.cells[i];
    if (!cell) { return ""; }
    var sort = cell.getAttribute("data-sort");
    return sort !== null ? sort : cell.textContent.trim();
  }

  function compare(a, b, numeric) {
    if (numeric) {
      var x = parseFloat(a), y = parseFloat(b);
      var xn = isNaN(x), yn = isNaN(y);
      if (xn || yn) { return xn === yn ? 0 : (xn ? 1 : -1); }  /* blanks last */
      return x - y;
    }
    return collator.compare(a, b);
  }

  function sortable(table) {
    var body = table.tBodies[0];
    if (!body || !table.tHead) { return; }
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (row, i) { row.setAttribute("data-index", String(i)); });
    var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
    heads.forEach(function (th, col) {
      th.setAttribute("aria-sort", "none");
      th.addEventListener("click", function () {
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        heads.forEach(function (h) { h.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
        var numeric = th.getAttribute("data-type") === "num";
        var current = Array.prototype.slice.call(body.rows);
        current.sort(function (a, b) {
          return dir * compare(key(a, col), key(b, col), numeric) ||
            (Number(a.getAttribute("data-index")) - Number(b.getAttribute("data-index")));
        });
        current.forEach(function (row) { body.appendChild(row); });
      });
    });
  }

  function filterable(bar) {
    var table = document.getElementById(bar.getAttribute("data-for"));
    if (!table || !table.tBodies[0]) { return; }
    var text = bar.querySelector(".filter-text");
    var cat = bar.querySelector(".filter-cat");
    var count = bar.querySelector(".count");
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    function apply() {
      var q = text ? text.value.trim().toLowerCase() : "";
      var c = cat ? cat.value : "";
      var shown = 0;
      rows.forEach(function (row) {
        var ok = (!q || row.textContent.toLowerCase().indexOf(q) !== -1) &&
          (!c || row.getAttribute("data-cat") === c);
        row.hidden = !ok;
        if (ok) { shown += 1; }
      });
      if (count) { count.textContent = shown + " of " + rows.length + " rows shown"; }
    }
    if (text) { text.addEventListener("input", apply); }
    if (cat) { cat.addEventListener("change", apply); }
    bar.hidden = false;
    apply();
  }

  Array.prototype.forEach.call(document.querySelectorAll("table.data"), sortable);
  Array.prototype.forEach.call(document.querySelectorAll(".filters[data-for]"), filterable);
}());
