// The leaderboard's filters and sorting (no charts here: plotly draws every figure).
// Rows are recomputed from LINGPROBE_SCORES (one test score per subject and task) for the tasks
// the filters keep, one row per subject (keyed by its full name; `name` is the unique label
// shown): mean score, tasks scored, and the mean winning rate over those tasks (Holmes: per
// task, the share of the other subjects a subject beats, ties counting half).
(function () {
  const scores = JSON.parse(document.getElementById("lingprobe-scores").textContent);
  const filters = Array.from(document.querySelectorAll("select[data-filter]"));
  const body = document.querySelector("#leaderboard tbody");
  let sortKey = "mwr";
  let descending = true;

  function kept(row) {
    return filters.every((f) => f.value === "" || String(row[f.dataset.filter]) === f.value);
  }

  function rows() {
    const chosen = scores.filter(kept);
    const byTask = new Map();
    for (const r of chosen) {
      if (!byTask.has(r.task)) byTask.set(r.task, []);
      byTask.get(r.task).push(r);
    }
    const stats = new Map();
    for (const r of chosen) {
      if (!stats.has(r.subject)) stats.set(r.subject, { name: r.name, sum: 0, n: 0, wins: 0, contests: 0 });
      const s = stats.get(r.subject);
      s.sum += r.score;
      s.n += 1;
    }
    for (const entries of byTask.values()) {
      if (entries.length < 2) continue;
      for (const a of entries) {
        let won = 0;
        for (const b of entries) {
          if (a === b) continue;
          won += a.score > b.score ? 1 : a.score === b.score ? 0.5 : 0;
        }
        const s = stats.get(a.subject);
        s.wins += won / (entries.length - 1);
        s.contests += 1;
      }
    }
    return Array.from(stats.values()).map((s) => ({
      subject: s.name,
      mean: s.sum / s.n,
      tasks: s.n,
      mwr: s.contests ? s.wins / s.contests : null,
    }));
  }

  function render() {
    const table = rows();
    table.sort((a, b) => {
      const x = a[sortKey], y = b[sortKey];
      if (x === y) return a.subject < b.subject ? -1 : 1;
      if (x === null) return 1;
      if (y === null) return -1;
      return (x < y ? -1 : 1) * (descending ? -1 : 1);
    });
    body.innerHTML = "";
    table.forEach((r, i) => {
      const tr = document.createElement("tr");
      const cells = [i + 1, r.subject, r.mwr === null ? "–" : r.mwr.toFixed(3), r.mean.toFixed(3), r.tasks];
      for (const c of cells) {
        const td = document.createElement("td");
        td.textContent = String(c);
        tr.appendChild(td);
      }
      body.appendChild(tr);
    });
    document.querySelectorAll("#leaderboard th[data-sort]").forEach((th) => {
      th.classList.toggle("sorted", th.dataset.sort === sortKey);
    });
  }

  filters.forEach((f) => f.addEventListener("change", render));
  document.querySelectorAll("#leaderboard th[data-sort]").forEach((th) => {
    th.addEventListener("click", () => {
      descending = th.dataset.sort === sortKey ? !descending : th.dataset.sort !== "subject";
      sortKey = th.dataset.sort;
      render();
    });
  });
  render();
})();
