// The report as one self-contained HTML file. Text and tables are written
// here; the charts are drawn in the page by Chart.js (Debian libjs-chart.js,
// inlined) from the model's JSON, embedded in the same file. A Content-
// Security-Policy forbids every fetch, so the page cannot reach the network
// even by mistake. Headless Chromium prints it to PDF.

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/estimate/training_estimator.h"
#include "core/report/report.h"
#include "core/report/report_format.h"

#ifndef ORRERY_CHARTJS_PATH
#define ORRERY_CHARTJS_PATH ""
#endif

namespace orrery::report {

namespace {

std::string E(const std::string& s) { return HtmlEscape(s); }

std::string Pct(double fraction) { return FormatSig(100 * fraction, 3) + " %"; }

std::string Seconds(double s) {
  if (s >= 1) return FormatSig(s, 3) + " s";
  if (s >= 1e-3) return FormatSig(s * 1e3, 3) + " ms";
  return FormatSig(s * 1e6, 3) + " us";
}

// A parameter count in the unit that reads at its size (19.6 k, 80.6 M, 70.6 B).
std::string ParamCount(double n) {
  if (n < 1e6) return FormatSig(n / 1e3, 3) + " k";
  if (n < 1e9) return FormatSig(n / 1e6, 3) + " M";
  return FormatSig(n / 1e9, 3) + " B";
}

std::string Cost(double usd, double price) { return price > 0 ? FormatMoney(usd, 2) : "not priced"; }

const char kStyle[] = R"CSS(
:root { --ink:#1d2330; --muted:#5b6472; --rule:#d9dde3; --accent:#1f5fa8; --soft:#f3f6fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; color: var(--ink);
       margin: 0 auto; max-width: 1080px; padding: 28px 36px 48px; background: #fff; }
header { border-bottom: 3px solid var(--accent); padding-bottom: 10px; margin-bottom: 18px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 30px 0 8px; padding-top: 6px; border-top: 1px solid var(--rule); }
h3 { font-size: 15px; margin: 16px 0 6px; }
.meta { color: var(--muted); font-size: 12px; }
.question { font-size: 15px; color: var(--muted); margin: 6px 0; }
.answer { font-size: 18px; font-weight: 600; background: var(--soft); border-left: 5px solid var(--accent);
          padding: 12px 16px; margin: 10px 0 14px; }
.cards { display: grid; grid-template-columns: repeat(6, 1fr); gap: 10px; margin: 8px 0 4px; }
.card { border: 1px solid var(--rule); border-radius: 6px; padding: 8px 10px; }
.card .v { font-size: 19px; font-weight: 700; }
.card .k { font-size: 11px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
table { border-collapse: collapse; width: 100%; margin: 6px 0 10px; font-size: 12.5px; }
th, td { border-bottom: 1px solid var(--rule); padding: 5px 7px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.n, th.n { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
tr.first td { font-weight: 600; }
table.alt td.n { white-space: normal; }
table.alt td:first-child { white-space: nowrap; }
.note { color: var(--muted); font-size: 12.5px; margin: 4px 0; }
.why { background: #fffbea; border: 1px solid #f0e2a8; padding: 8px 12px; border-radius: 4px; margin: 8px 0; }
figure { margin: 10px 0 14px; }
figcaption { color: var(--muted); font-size: 12px; margin-top: 4px; }
.chart { position: relative; width: 100%; }
.chart.h220 { height: 220px; } .chart.h260 { height: 260px; } .chart.h320 { height: 320px; }
.chart.h380 { height: 380px; }
.two { display: grid; grid-template-columns: 1fr 1fr; gap: 18px; }
pre { background: var(--soft); padding: 8px 10px; white-space: pre-wrap; word-break: break-all; font-size: 12px; }
.bar { display: inline-block; height: 8px; background: var(--accent); vertical-align: middle; margin-left: 6px; }
.bar.full { background: #c0392b; }
@page { size: A4; margin: 14mm 12mm; }
@media print {
  body { padding: 0; max-width: none; font-size: 11.5px; }
  h2 { break-after: avoid; }
  figure, table, .answer, .cards { break-inside: avoid; }
  .cards { grid-template-columns: repeat(6, 1fr); }
}
body.single > * { display: none; }
body.single > .solo { display: block; }
)CSS";

// The page script: charts from the embedded model, then a self-check the
// test suite reads back (every canvas drawn, no script error, no blocked fetch).
const char kScript[] = R"JS(
(function () {
  'use strict';
  var errors = [];
  window.addEventListener('error', function (e) { errors.push(String(e.message || e)); });
  document.addEventListener('securitypolicyviolation', function (e) {
    errors.push('blocked fetch: ' + e.blockedURI);
  });
  var M = JSON.parse(document.getElementById('report-model').textContent);
  var colors = {
    'forward': '#1f5fa8', 'backward': '#5b9bd5', 'recompute': '#9dc3e6',
    'TP communication': '#e67e22', 'CP communication': '#f5b041', 'EP communication': '#f8c471',
    'pipeline bubble': '#95a5a6', 'pipeline transfers': '#7f8c8d', 'DP communication': '#c0392b',
    'optimizer': '#27ae60', 'offload': '#8e44ad',
    'backward (input gradients)': '#5b9bd5', 'backward (weight gradients)': '#85b4e0',
    'DP gradient reduction': '#c0392b', 'ZeRO parameter gather': '#e8a0a0', 'join': '#bbbbbb'
  };
  function color(k) { return colors[k] || '#34495e'; }
  function sig(v, d) { if (!isFinite(v)) return 'n/a'; return Number(v.toPrecision(d || 3)).toLocaleString('en-US'); }
  function dur(s) { return s >= 1 ? sig(s) + ' s' : s >= 1e-3 ? sig(s * 1e3) + ' ms' : sig(s * 1e6) + ' us'; }
  function money(v) { return v >= 1e6 ? '$' + sig(v / 1e6, 2) + ' M' : v >= 1e3 ? '$' + sig(v / 1e3, 2) + ' k' : '$' + sig(v, 3); }
  Chart.defaults.animation = false;
  Chart.defaults.responsive = true;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.family = '"DejaVu Sans", "Helvetica Neue", Arial, sans-serif';
  Chart.defaults.font.size = 11;
  Chart.defaults.color = '#1d2330';
  function title(t) { return { display: true, text: t, font: { size: 13, weight: 'bold' } }; }
  function axis(t, extra) { var a = { title: { display: true, text: t } }; for (var k in extra) a[k] = extra[k]; return a; }
  var made = [];
  function make(id, cfg) {
    var el = document.getElementById(id);
    if (!el) return;
    made.push(id);
    new Chart(el, cfg);
  }

  // Where the time goes: one stacked bar per ranked plan.
  var plans = M.plans.filter(function (p) { return p.feasible; });
  if (plans.length) {
    var parts = [];
    plans.forEach(function (p) { p.time.forEach(function (t) { if (parts.indexOf(t.name) < 0) parts.push(t.name); }); });
    make('chart-breakdown', {
      type: 'bar',
      data: {
        labels: plans.map(function (p) { return p.label + ' (' + p.gpus.toLocaleString('en-US') + ' GPUs)'; }),
        datasets: parts.map(function (n) {
          return { label: n, backgroundColor: color(n),
                   data: plans.map(function (p) { var t = p.time.find(function (x) { return x.name === n; }); return t ? t.seconds : 0; }) };
        })
      },
      options: { indexAxis: 'y', plugins: { title: title('Time of one training step by cause (exposed seconds)'),
                 legend: { position: 'bottom' },
                 tooltip: { callbacks: { label: function (c) { return c.dataset.label + ': ' + dur(c.raw); } } } },
                 scales: { x: axis('seconds per step', { stacked: true, beginAtZero: true }), y: { stacked: true } } }
    });
    // Offloaded optimizer states and activations live in host memory: shown
    // as their own bar, only when some plan keeps any there.
    var mem = [{ label: 'memory per GPU (GB)', backgroundColor: '#1f5fa8',
                 data: plans.map(function (p) { return p.memory_bytes / 1e9; }) },
               { label: 'capacity (GB)', backgroundColor: '#d9dde3',
                 data: plans.map(function (p) { return p.capacity_bytes / 1e9; }) }];
    if (plans.some(function (p) { return p.host_bytes > 0; }))
      mem.push({ label: 'in host memory per GPU (GB)', backgroundColor: '#e0a030',
                 data: plans.map(function (p) { return p.host_bytes / 1e9; }) });
    make('chart-memory', {
      type: 'bar',
      data: { labels: plans.map(function (p) { return p.label; }), datasets: mem },
      options: { plugins: { title: title('Memory per GPU against capacity'), legend: { position: 'bottom' } },
                 scales: { y: axis('GB (decimal)', { beginAtZero: true }), x: axis('plan') } }
    });
  }

  // The event engine's timeline of one step.
  var T = M.timeline;
  if (T.simulated && T.bars.length) {
    var kinds = [];
    T.bars.forEach(function (b) { if (kinds.indexOf(b[3]) < 0) kinds.push(b[3]); });
    var unit = T.makespan_s >= 1 ? 1 : 1e3, uname = unit === 1 ? 's' : 'ms';
    make('chart-timeline', {
      type: 'bar',
      data: { labels: T.rows,
              datasets: kinds.map(function (k) {
                return { label: k, backgroundColor: color(k), barPercentage: 0.9, categoryPercentage: 1.0, grouped: false,
                         data: T.bars.filter(function (b) { return b[3] === k; })
                                 .map(function (b) { return { x: [b[1] * unit, b[2] * unit], y: T.rows[b[0]] }; }) };
              }) },
      options: { indexAxis: 'y', parsing: { xAxisKey: 'x', yAxisKey: 'y' },
                 plugins: { title: title('One step on the event engine (' + T.schedule + '), per pipeline stage and stream'),
                            legend: { position: 'bottom' }, tooltip: { enabled: false } },
                 scales: { x: axis('time in the step (' + uname + ')', { min: 0 }),
                           y: { ticks: { autoSkip: false } } } }
    });
  }

  // Scaling over the GPU range: the counts double, so a category axis is a
  // log axis with a tick at every count.
  var S = M.scaling.points.filter(function (p) { return p.feasible; });
  if (S.length) {
    var priced = M.price_per_gpu_hour_usd > 0;
    var labels = S.map(function (p) { return p.gpus.toLocaleString('en-US'); });
    var maxCost = Math.max.apply(null, S.map(function (p) { return p.cost_usd; }));
    var cu = maxCost >= 1e6 ? [1e6, 'M USD'] : maxCost >= 1e3 ? [1e3, 'k USD'] : [1, 'USD'];
    var trained = S[0].days > 0;
    var ds = [{ label: trained ? 'days to train' : 'seconds per step', yAxisID: 'y', borderColor: '#1f5fa8',
                backgroundColor: '#1f5fa8', data: S.map(function (p) { return trained ? p.days : p.iteration_s; }) }];
    if (priced && trained) ds.push({ label: 'cost (' + cu[1] + ')', yAxisID: 'y2', borderColor: '#27ae60',
                          backgroundColor: '#27ae60', borderDash: [6, 3],
                          data: S.map(function (p) { return p.cost_usd / cu[0]; }) });
    var xaxis = axis('GPUs', {});
    var scales = { x: xaxis, y: axis(trained ? 'days to train (log scale)' : 'seconds per step (log scale)',
                                     { type: 'logarithmic', position: 'left' }) };
    if (priced && trained) scales.y2 = axis('cost (' + cu[1] + ')', { position: 'right', beginAtZero: true, grid: { drawOnChartArea: false } });
    make('chart-scaling', { type: 'line', data: { labels: labels, datasets: ds },
      options: { plugins: { title: title(priced && trained ? 'Time and cost to train against GPU count' : 'Time against GPU count'),
                            legend: { position: 'bottom' } }, scales: scales } });
    var over = M.scaling.comm_takes_over_gpus;
    var ds2 = [{ label: 'MFU (%)', borderColor: '#1f5fa8', backgroundColor: '#1f5fa8',
                 data: S.map(function (p) { return 100 * p.mfu; }) },
               { label: 'communication + bubble (% of step)', borderColor: '#c0392b', backgroundColor: '#c0392b',
                 data: S.map(function (p) { return 100 * p.comm_fraction; }) },
               { label: 'half the step', borderColor: '#95a5a6', borderDash: [4, 4], pointRadius: 0, borderWidth: 1,
                 data: S.map(function () { return 50; }) }];
    if (over > 0) ds2.push({ label: 'communication takes over', pointStyle: 'triangle', pointRadius: 9, showLine: false,
                             borderColor: '#c0392b', backgroundColor: '#c0392b',
                             data: S.map(function (p) { return p.gpus === over ? 100 * p.comm_fraction : null; }) });
    make('chart-efficiency', { type: 'line', data: { labels: labels, datasets: ds2 },
      options: { plugins: { title: title('Efficiency against GPU count'), legend: { position: 'bottom' } },
                 scales: { x: xaxis, y: axis('percent', { min: 0, max: 100 }) } } });
  }

  // A sweep store's axes.
  if (M.sweep) {
    M.sweep.axes.forEach(function (a, i) {
      var line = function (label, key, c, dash) {
        return { label: label, borderColor: c, backgroundColor: c, borderDash: dash || [],
                 data: a.values.map(function (v) { return v.ok > 0 ? v[key] : null; }) };
      };
      make('chart-sweep-' + i, { type: 'line',
        data: { labels: a.values.map(function (v) { return v.value; }),
                datasets: [line('best', 'best', '#1f5fa8'), line('median', 'median', '#95a5a6', [6, 3]),
                           line('worst', 'worst', '#c0392b', [2, 3])] },
        options: { plugins: { title: title(M.sweep.metric + ' against ' + a.path), legend: { position: 'bottom' } },
                   scales: { x: axis(a.path, {}), y: axis(M.sweep.metric, { beginAtZero: true }) } } });
    });
  }

  // Sensitivity: a tornado.
  var R = M.sensitivity.rows;
  if (R.length) {
    make('chart-tornado', {
      type: 'bar',
      data: { labels: R.map(function (r) { return r.input; }),
              datasets: [{ label: 'input -20 %', backgroundColor: '#e67e22', data: R.map(function (r) { return [0, r.low_pct]; }) },
                         { label: 'input +20 %', backgroundColor: '#1f5fa8', data: R.map(function (r) { return [0, r.high_pct]; }) }] },
      options: { indexAxis: 'y', plugins: { title: title('Change of the ' + M.sensitivity.metric + ' when one input moves by 20 %'),
                 legend: { position: 'bottom' },
                 tooltip: { callbacks: { label: function (c) { return c.dataset.label + ': ' + sig(c.raw[1], 2) + ' %'; } } } },
                 scales: { x: axis('change of the ' + M.sensitivity.metric + ' (%)', {}), y: { stacked: true } } }
    });
  }

  // One figure or section alone (#only=fig-scaling, #only=sensitivity), for
  // screenshots of one chart.
  var m = /only=([\w-]+)/.exec(location.hash);
  if (m) {
    var f = document.getElementById(m[1]);
    if (f) {
      var fig = f.closest('figure') || f;
      document.body.appendChild(fig);
      fig.classList.add('solo');
      document.body.classList.add('single');
    }
  }

  // Self-check: a canvas with no drawn pixel is an empty chart.
  var blank = [];
  made.forEach(function (id) {
    var c = document.getElementById(id), ctx = c.getContext('2d');
    var d = ctx.getImageData(0, 0, c.width, c.height).data, n = 0;
    for (var i = 3; i < d.length; i += 4) if (d[i] !== 0) { n++; if (n > 200) break; }
    if (n <= 200) blank.push(id);
  });
  document.body.setAttribute('data-charts', String(made.length));
  document.body.setAttribute('data-blank-charts', blank.join(' '));
  document.body.setAttribute('data-errors', errors.join(' | '));
  document.body.setAttribute('data-ready', '1');
})();
)JS";

// Whether a plan's causal MFU is stated beside its MFU (PlanRow::mfu_causal;
// as `orrery estimate` states it).
bool CausalVisible(const PlanRow& r) { return engine::CausalMfuDiffers(r.mfu, r.mfu_causal); }

void Card(std::ostream& o, const std::string& value, const std::string& key) {
  o << "<div class=\"card\"><div class=\"v\">" << E(value) << "</div><div class=\"k\">" << E(key)
    << "</div></div>";
}

std::string MemCell(const PlanRow& r) {
  const double f = r.capacity_bytes > 0 ? r.memory_bytes / r.capacity_bytes : 0;
  std::ostringstream o;
  o << FormatSig(r.memory_bytes / 1e9, 3) << " / " << FormatSig(r.capacity_bytes / 1e9, 3) << " GB"
    << "<span class=\"bar" << (f > 0.95 ? " full" : "") << "\" style=\"width:"
    << static_cast<int>(std::round(40 * std::min(1.0, f))) << "px\"></span>";
  if (r.host_bytes > 0) o << "<br><span class=\"note\">+ " << FormatSig(r.host_bytes / 1e9, 3) << " GB in host memory</span>";
  return o.str();
}

void PlansTable(std::ostream& o, const std::vector<PlanRow>& rows, double price, bool rank) {
  o << "<table><thead><tr><th>" << (rank ? "rank" : "") << "</th><th class=\"n\">GPUs</th><th>plan</th>"
    << "<th class=\"n\">step</th><th class=\"n\">tokens/s</th><th class=\"n\">MFU</th>"
    << "<th class=\"n\">memory per GPU</th><th class=\"n\">days</th><th class=\"n\">cost</th></tr></thead><tbody>";
  for (size_t i = 0; i < rows.size(); ++i) {
    const PlanRow& r = rows[i];
    o << "<tr" << (i == 0 ? " class=\"first\"" : "") << "><td>" << E(r.label) << "</td><td class=\"n\">"
      << FormatCount(r.gpus) << "</td><td>" << E(r.plan);
    if (!r.feasible) o << "<br><span class=\"note\">infeasible: " << E(r.reason) << "</span>";
    o << "</td>";
    if (r.feasible) {
      o << "<td class=\"n\">" << Seconds(r.iteration_s) << "</td><td class=\"n\">"
        << FormatSig(r.tokens_per_s / 1e6, 3) << " M</td><td class=\"n\">" << Pct(r.mfu)
        << (CausalVisible(r) ? "<br><span class=\"note\">causal " + Pct(r.mfu_causal) + "</span>" : "")
        << "</td><td class=\"n\">"
        << MemCell(r) << "</td><td class=\"n\">" << (r.days > 0 ? FormatSig(r.days, 3) : "-") << "</td><td class=\"n\">"
        << (r.days > 0 ? Cost(r.cost_usd, price) : "-") << "</td>";
    } else {
      o << "<td colspan=\"6\"></td>";
    }
    o << "</tr>";
  }
  o << "</tbody></table>";
}

void Figure(std::ostream& o, const std::string& id, const char* height, const std::string& caption) {
  o << "<figure id=\"fig-" << id << "\"><div class=\"chart " << height << "\"><canvas id=\"chart-" << id
    << "\" role=\"img\" aria-label=\"" << E(caption) << "\"></canvas></div><figcaption>" << E(caption)
    << "</figcaption></figure>";
}

std::string ScriptSafe(std::string s) {
  for (size_t at = s.find("</"); at != std::string::npos; at = s.find("</", at + 3)) s.replace(at, 2, "<\\/");
  return s;
}

}  // namespace

std::string RenderHtml(const ReportModel& m, const std::string& chart_js) {
  std::ostringstream o;
  const double price = m.price_per_gpu_hour;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
    << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
       "style-src 'unsafe-inline'; img-src data:\">"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    << "<title>" << E(m.title) << "</title><style>" << kStyle << "</style></head><body>\n";

  o << "<header><h1>" << E(m.title) << "</h1><div class=\"meta\">Orrery " << E(m.version) << " · generated "
    << E(m.generated) << " · an analytical estimate, not a measurement (confidence: section 6)</div></header>\n";

  // 1. The question and the answer.
  o << "<section id=\"answer\"><h2>1 · The question and the answer</h2><p class=\"question\">" << E(m.question)
    << "</p><div class=\"answer\">" << E(m.answer) << "</div>";
  if (!m.plans.empty() && m.plans.front().feasible) {
    const PlanRow& r = m.plans.front();
    o << "<div class=\"cards\">";
    Card(o, FormatCount(r.gpus), ShortDevice(r.device) + " GPUs");
    if (r.days > 0) {
      Card(o, FormatDays(r.days), "to train");
      Card(o, FormatGpuHours(r.gpu_hours), "GPU-hours");
      Card(o, FormatEnergyMwh(r.energy_mwh), "energy at PUE " + FormatSig(m.pue, 3));
      Card(o, price > 0 ? FormatMoney(r.cost_usd, 2) : "not priced",
           price > 0 ? "at " + FormatMoney(price, 3) + "/GPU-h" : "no price given");
    } else {
      Card(o, Seconds(r.iteration_s), "per step");
      Card(o, FormatSig(r.tokens_per_s / 1e6, 3) + " M", "tokens/s");
      Card(o, "-", "no token count given");
      Card(o, "-", "cost");
    }
    // Where causal attention is a visible part of the FLOPs (long
    // sequences) the MFU credits the masked half no kernel runs: the card
    // says so with the figure that counts what runs (as `orrery estimate`).
    Card(o, Pct(r.mfu), CausalVisible(r) ? "MFU (causal " + Pct(r.mfu_causal) + ")" : std::string("MFU"));
    o << "</div>";
  }
  if (m.law) {
    const LawSummary& l = *m.law;
    o << "<p class=\"note\">Scaling law " << E(l.name) << ": " << E(l.formula) << " (" << E(l.source)
      << "). Compute-optimal split: N = " << E(ParamCount(l.params_n)) << " parameters, D = "
      << E(FormatTokens(l.tokens_d)) << ", C = " << E(FormatFlopCount(l.compute_flops)) << ".";
    if (l.has_range)
      o << " With the law's uncertainty (" << FormatSig(100 * l.level, 2) << " % interval): " << FormatSig(l.days_lo, 3)
        << " to " << FormatSig(l.days_hi, 3) << " days"
        << (price > 0 ? ", " + FormatMoney(l.cost_lo, 2) + " to " + FormatMoney(l.cost_hi, 2) : std::string()) << ".";
    o << "</p>";
  }
  for (const auto& n : m.notes) o << "<p class=\"note\">" << E(n) << "</p>";
  o << "</section>\n";

  // 2. Recommended plan and the runners-up.
  // Without a plan the answer (section 1) says why; the sections that
  // describe a plan say so in one line instead of showing empty tables.
  const bool planned = !m.plans.empty() && m.plans.front().feasible;
  constexpr const char* kNoPlan = "<p class=\"note\">No plan to show: section 1 says why.</p>";
  o << "<section id=\"plans\"><h2>2 · Recommended plan and the runners-up</h2>";
  if (!m.search_summary.empty()) o << "<p class=\"note\">" << E(m.search_summary) << "</p>";
  if (m.plans.empty())
    o << kNoPlan;
  else
    PlansTable(o, m.plans, price, true);
  if (!m.why_first.empty())
    o << "<div class=\"why\"><b>Why #1 wins:</b> " << E(m.why_first) << ".</div>";
  bool any_why = false;
  for (size_t i = 1; i < m.plans.size(); ++i) any_why = any_why || !m.plans[i].why.empty();
  if (any_why) {
    o << "<table><thead><tr><th>runner-up</th><th>what #1 does better (the part of the step that differs most)</th>"
         "</tr></thead><tbody>";
    for (size_t i = 1; i < m.plans.size(); ++i)
      o << "<tr><td>" << E(m.plans[i].label) << "</td><td>" << E(m.plans[i].why.substr(m.plans[i].why.find(':') + 2))
        << "</td></tr>";
    o << "</tbody></table>";
  }
  if (!m.plans.empty() && m.plans.front().feasible)
    Figure(o, "memory", "h220",
           "Memory per GPU (weights, gradients, optimizer states, activations) of the fullest pipeline stage against the "
           "device's capacity; a plan that offloads shows what it keeps in host memory instead.");
  o << "</section>\n";

  // 3. Where the time goes.
  o << "<section id=\"time\"><h2>3 · Where the time goes</h2>";
  if (!planned && !m.timeline.simulated) o << kNoPlan;
  if (planned) {
    Figure(o, "breakdown", "h260",
           "Exposed time of one training step by cause for each ranked plan; communication hidden behind compute is not "
           "counted.");
    const PlanRow& r = m.plans.front();
    o << "<table><thead><tr><th>part of the step (#1)</th><th class=\"n\">seconds</th><th class=\"n\">share</th></tr>"
         "</thead><tbody>";
    for (const auto& t : r.time)
      o << "<tr><td>" << E(t.name) << "</td><td class=\"n\">" << Seconds(t.seconds) << "</td><td class=\"n\">"
        << FormatSig(100 * t.seconds / r.iteration_s, 2) << " %</td></tr>";
    o << "<tr class=\"first\"><td>step</td><td class=\"n\">" << Seconds(r.iteration_s)
      << "</td><td class=\"n\">100 %</td></tr></tbody></table>";
  }
  if (m.timeline.simulated) {
    Figure(o, "timeline", "h380", m.timeline.note);
    const double diff = m.timeline.makespan_s / m.timeline.closed_form_s - 1;
    o << "<p class=\"note\">The event engine replays the step in " << Seconds(m.timeline.makespan_s)
      << " against the closed form's " << Seconds(m.timeline.closed_form_s) << " (the figure every other number of "
      << "this report uses)";
    if (std::fabs(diff) > 0.02)
      o << "; the replay is " << FormatSig(100 * std::fabs(diff), 2) << " % " << (diff > 0 ? "longer" : "shorter")
        << " because it runs each transfer when its data is ready, where the closed form assumes the overlap a "
        << "tuned run achieves";
    if (m.plans.front().pp > 1)
      o << "; the pipeline stages are idle " << FormatSig(100 * m.timeline.bubble_fraction, 2) << " % of the step";
    o << ".</p>";
  } else if (!m.timeline.note.empty()) {
    o << "<p class=\"note\">Timeline: " << E(m.timeline.note) << "</p>";
  }
  o << "</section>\n";

  // 4. Scaling.
  o << "<section id=\"scaling\"><h2>4 · Scaling</h2>";
  if (!m.scaling.note.empty()) o << "<p class=\"note\">" << E(m.scaling.note) << "</p>";
  if (m.scaling.points.empty()) {
    o << kNoPlan;
  } else {
  o << "<div class=\"two\">";
  Figure(o, "scaling", "h260", "Days to train (log scale) and cost against GPU count (doubling), best plan at each count.");
  Figure(o, "efficiency", "h260",
         "MFU and the share of the step spent in exposed communication and pipeline bubble; past 50 % communication "
         "takes over.");
  o << "</div><table><thead><tr><th class=\"n\">GPUs</th><th>best plan</th><th class=\"n\">step</th>"
       "<th class=\"n\">days</th><th class=\"n\">cost</th><th class=\"n\">MFU</th><th class=\"n\">comm + bubble</th>"
       "</tr></thead><tbody>";
  for (const auto& p : m.scaling.points) {
    o << "<tr><td class=\"n\">" << FormatCount(p.gpus) << "</td>";
    if (!p.feasible) {
      o << "<td colspan=\"6\">no feasible plan: " << E(p.reason) << "</td></tr>";
      continue;
    }
    o << "<td>" << E(p.plan) << "</td><td class=\"n\">" << Seconds(p.iteration_s) << "</td><td class=\"n\">"
      << (p.days > 0 ? FormatSig(p.days, 3) : "-") << "</td><td class=\"n\">"
      << (p.days > 0 ? Cost(p.cost_usd, price) : "-") << "</td><td class=\"n\">" << Pct(p.mfu)
      << "</td><td class=\"n\">" << FormatSig(100 * p.comm_fraction, 2) << " %</td></tr>";
  }
  o << "</tbody></table>";
  }
  if (m.sweep) {
    const SweepSection& sw = *m.sweep;
    o << "<h3>What-if sweep " << E(sw.name) << "</h3><p class=\"note\">" << FormatCount(sw.points) << " points ("
      << FormatCount(sw.ok) << " feasible) from the result store " << E(sw.store) << ", each "
      << (sw.each == "search" ? "the best plan a search finds there" : "the scenario's plan") << ". Each chart shows, "
      << "at each value of one axis, the best, median and worst " << E(sw.metric) << " over the other axes.</p>";
    o << "<div class=\"two\">";
    for (size_t i = 0; i < sw.axes.size(); ++i)
      Figure(o, "sweep-" + std::to_string(i), "h220", sw.metric + " against " + sw.axes[i].path + ".");
    o << "</div><table><thead><tr><th>best points</th><th>plan</th><th class=\"n\">" << E(sw.metric)
      << "</th><th class=\"n\">MFU</th></tr></thead><tbody>";
    for (const auto& b : sw.best)
      o << "<tr><td>" << E(b.params) << "</td><td>" << E(b.plan) << "</td><td class=\"n\">" << FormatSig(b.answer, 3)
        << "</td><td class=\"n\">" << Pct(b.mfu) << "</td></tr>";
    o << "</tbody></table>";
  }
  o << "</section>\n";

  // 5. Sensitivity.
  o << "<section id=\"sensitivity\"><h2>5 · Sensitivity</h2>";
  if (m.sensitivity.rows.empty() && m.sensitivity.notes.empty()) o << kNoPlan;
  if (!m.sensitivity.rows.empty()) {
    Figure(o, "tornado", "h260",
           "Change of the " + m.sensitivity.metric + " of the recommended plan when one input moves by 20 %; the "
           "longest bars are what the answer hangs on.");
    o << "<table><thead><tr><th>input</th><th>value used</th><th class=\"n\">at -20 %</th><th class=\"n\">at +20 %</th>"
         "</tr></thead><tbody>";
    for (const auto& r : m.sensitivity.rows)
      o << "<tr><td>" << E(r.input) << "</td><td>" << E(r.base_value) << "</td><td class=\"n\">"
        << (r.low_pct >= 0 ? "+" : "") << FormatSig(r.low_pct, 2) << " %</td><td class=\"n\">"
        << (r.high_pct >= 0 ? "+" : "") << FormatSig(r.high_pct, 2) << " %</td></tr>";
    o << "</tbody></table>";
  }
  for (const auto& n : m.sensitivity.notes) o << "<p class=\"note\">" << E(n) << ".</p>";
  o << "</section>\n";

  // 6. Confidence.
  o << "<section id=\"confidence\"><h2>6 · Confidence</h2>";
  if (m.confidence.statement.empty())
    o << kNoPlan;
  else
    o << "<div class=\"why\">" << E(m.confidence.statement) << "</div>";
  if (!m.confidence.runs.empty()) {
    o << "<p class=\"note\">Basis: " << E(m.confidence.basis)
      << ", each predicted by <code>orrery validate</code> with the same model and presets. The error is "
         "the metric's own; the speed is the predicted over the measured speed, less 1 (+ = predicted faster, "
         "whatever the metric).</p>"
         "<table><thead><tr><th>measured run</th><th>GPU</th><th class=\"n\">GPUs</th><th>metric</th>"
         "<th class=\"n\">measured</th><th class=\"n\">predicted</th><th class=\"n\">error</th>"
         "<th class=\"n\" title=\"predicted over measured speed, less 1: + = predicted faster\">speed</th>"
         "<th>source</th></tr>"
         "</thead><tbody>";
    for (const auto& r : m.confidence.runs)
      o << "<tr><td>" << E(r.model) << "</td><td>" << E(r.gpu) << "</td><td class=\"n\">" << FormatCount(r.gpus)
        << "</td><td>" << E(r.metric) << "</td><td class=\"n\">" << FormatSig(r.measured, 3) << "</td><td class=\"n\">"
        << FormatSig(r.predicted, 3) << "</td><td class=\"n\">" << (r.error_pct >= 0 ? "+" : "")
        << FormatSig(r.error_pct, 2) << " %</td><td class=\"n\">" << (r.speed_error_pct >= 0 ? "+" : "")
        << FormatSig(r.speed_error_pct, 2) << " %</td><td>" << E(r.source) << "</td></tr>";
    o << "</tbody></table>";
  }
  o << "</section>\n";

  // 7. Alternatives.
  o << "<section id=\"alternatives\"><h2>7 · Alternatives</h2>";
  if (m.alternatives.size() > 1) {
    o << "<table class=\"alt\"><thead><tr><th></th>";
    for (const auto& a : m.alternatives) o << "<th class=\"n\">" << E(a.label) << "</th>";
    o << "</tr></thead><tbody>";
    auto row = [&](const char* name, auto cell) {
      o << "<tr><td>" << name << "</td>";
      for (const auto& a : m.alternatives) o << "<td class=\"n\">" << (a.feasible ? cell(a) : std::string("infeasible")) << "</td>";
      o << "</tr>";
    };
    row("system", [](const PlanRow& a) { return E(a.system); });
    row("GPUs", [](const PlanRow& a) { return FormatCount(a.gpus) + " " + E(ShortDevice(a.device)); });
    row("plan", [](const PlanRow& a) { return E(a.plan); });
    row("global batch", [](const PlanRow& a) {
      return FormatCount(a.global_batch) + " x " + FormatCount(a.seq_len);
    });
    row("step", [](const PlanRow& a) { return Seconds(a.iteration_s); });
    row("MFU", [](const PlanRow& a) { return Pct(a.mfu); });
    row("causal MFU", [](const PlanRow& a) { return Pct(a.mfu_causal); });
    row("memory per GPU", [](const PlanRow& a) { return MemCell(a); });
    row("days", [](const PlanRow& a) { return a.days > 0 ? FormatSig(a.days, 3) : std::string("-"); });
    row("effective days", [](const PlanRow& a) {
      return a.effective_days > 0 ? FormatSig(a.effective_days, 3) + " (" + Pct(a.goodput) + " goodput)"
                                  : std::string("-");
    });
    row("GPU-hours", [](const PlanRow& a) { return a.days > 0 ? FormatGpuHours(a.gpu_hours) : std::string("-"); });
    row("energy", [](const PlanRow& a) { return a.days > 0 ? FormatEnergyMwh(a.energy_mwh) : std::string("-"); });
    row("cost", [&](const PlanRow& a) { return a.days > 0 ? Cost(a.cost_usd, price) : std::string("-"); });
    o << "</tbody></table>";
    for (const auto& a : m.alternatives)
      if (!a.feasible) o << "<p class=\"note\">" << E(a.label) << ": " << E(a.reason) << "</p>";
  } else {
    o << "<p class=\"note\">No alternatives were named; <code>--compare OTHER.yaml</code> adds a column per scenario "
         "(another device, a rail-only fabric, a different batch).</p>";
  }
  o << "</section>\n";

  // 8. Assumptions and sources.
  o << "<section id=\"assumptions\"><h2>8 · Assumptions and sources</h2>";
  if (m.assumptions.empty()) {
    o << kNoPlan;
  } else {
    o << "<table><thead><tr><th>what</th><th>item</th><th>value used</th><th>source</th></tr></thead><tbody>";
    for (const auto& a : m.assumptions)
      o << "<tr><td>" << E(a.group) << "</td><td>" << E(a.item) << "</td><td>" << E(a.value) << "</td><td>"
        << E(a.source) << "</td></tr>";
    o << "</tbody></table>";
  }
  o << "<p class=\"note\">Orrery " << E(m.version) << ". This document is regenerated by:</p><pre>"
    << E(m.command) << "</pre></section>\n";

  o << "<script type=\"application/json\" id=\"report-model\">" << ScriptSafe(ReportJson(m)) << "</script>\n";
  o << "<script>" << ScriptSafe(chart_js) << "</script>\n<script>" << kScript << "</script>\n</body></html>\n";
  return o.str();
}

bool LoadChartJs(std::string& out, std::string& error) {
  const char* env = std::getenv("ORRERY_CHARTJS");
  const std::string path = env != nullptr && *env != '\0' ? env : ORRERY_CHARTJS_PATH;
  if (path.empty()) {
    error = "Chart.js was not found when Orrery was configured (install the Debian package libjs-chart.js, or "
            "set ORRERY_CHARTJS to chart.min.js)";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read Chart.js at " + path + " (install libjs-chart.js, or set ORRERY_CHARTJS)";
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

std::string FindChromium() {
  const char* env = std::getenv("ORRERY_CHROMIUM");
  if (env != nullptr && *env != '\0') return env;
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
      std::string p = dir + "/" + name;
      if (access(p.c_str(), X_OK) == 0) return p;
    }
  }
  return "";
}

bool PrintPdf(const std::string& html_file, const std::string& pdf_file, std::string& error) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) {
    error = "no Chromium found to print the PDF (apt-get install chromium, or set ORRERY_CHROMIUM)";
    return false;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path html = fs::absolute(html_file, ec);
  const fs::path pdf = fs::absolute(pdf_file, ec);
  std::string profile = (fs::temp_directory_path(ec) / "orrery-chromium-XXXXXX").string();
  if (mkdtemp(profile.data()) == nullptr) {
    error = "cannot create a temporary Chromium profile";
    return false;
  }
  const std::vector<std::string> args = {chromium,
                                         "--headless",
                                         "--no-sandbox",
                                         "--disable-gpu",
                                         "--disable-background-networking",
                                         "--no-first-run",
                                         "--user-data-dir=" + profile,
                                         "--no-pdf-header-footer",
                                         "--print-to-pdf=" + pdf.string(),
                                         "file://" + html.string()};
  std::fflush(nullptr);  // the child must not write out the parent's buffered output again
  const pid_t pid = fork();
  if (pid < 0) {
    error = "cannot start Chromium";
    fs::remove_all(profile, ec);
    return false;
  }
  if (pid == 0) {
    std::vector<char*> argv;
    argv.reserve(args.size() + 1);
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (freopen("/dev/null", "w", stdout) == nullptr || freopen("/dev/null", "w", stderr) == nullptr) _exit(126);
    execv(chromium.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  fs::remove_all(profile, ec);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !fs::exists(pdf) || fs::file_size(pdf, ec) == 0) {
    error = "Chromium (" + chromium + ") did not print " + pdf_file;
    return false;
  }
  return true;
}

bool ParseGpuRange(const std::string& text, std::vector<int64_t>& out, std::string& error) {
  auto num = [](const std::string& t, int64_t& v) {
    if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos) return false;
    v = std::stoll(t);
    return v >= 1;
  };
  out.clear();
  const size_t dash = text.find('-');
  int64_t a = 0, b = 0;
  if (dash == std::string::npos) {
    if (!num(text, a)) {
      error = "--gpus expects N or A-B with whole numbers >= 1, got '" + text + "'";
      return false;
    }
    out.push_back(a);
    return true;
  }
  if (!num(text.substr(0, dash), a) || !num(text.substr(dash + 1), b) || b < a) {
    error = "--gpus expects N or A-B with 1 <= A <= B, got '" + text + "'";
    return false;
  }
  for (int64_t n = a; n <= b; n *= 2) out.push_back(n);
  if (out.back() != b) out.push_back(b);
  return true;
}

}  // namespace orrery::report
