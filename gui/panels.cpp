#include "gui/panels.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QBarSeries>
#include <QLabel>
#include <QLegendMarker>
#include <QLineEdit>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSpinBox>
#include <QScrollBar>
#include <QSplitter>
#include <QTableWidget>
#include <QValueAxis>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/api/text.h"
#include "gui/chart_util.h"
#include "gui/timeline_view.h"
#include "core/base/quantity.h"

namespace orrery::gui {

namespace {

QChartView* NewChartView(const QString& title) {
  auto* chart = new QChart;
  chart->setTitle(title);
  StyleChart(chart);
  auto* view = new QChartView(chart);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumHeight(180);
  return view;
}

// A table cell that sorts by a number, not by its text.
class NumberItem : public QTableWidgetItem {
 public:
  NumberItem(const QString& text, double value) : QTableWidgetItem(text) {
    setData(Qt::UserRole, value);
    setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  }
  bool operator<(const QTableWidgetItem& o) const override {
    return data(Qt::UserRole).toDouble() < o.data(Qt::UserRole).toDouble();
  }
};

QTableWidget* NewTable(const QStringList& header) {
  auto* t = new QTableWidget(0, static_cast<int>(header.size()));
  t->setHorizontalHeaderLabels(header);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->setSelectionMode(QAbstractItemView::SingleSelection);
  t->verticalHeader()->setVisible(false);
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  t->horizontalHeader()->setStretchLastSection(true);
  t->setAlternatingRowColors(true);
  return t;
}

// While alive, the table's columns keep their widths as its cells are set,
// and take their contents' widths once at the end: under ResizeToContents
// each setItem measured the whole column again, a quadratic fill (16 s for
// the Validation tab's 291 runs in a visible window).
class TableFill {
 public:
  explicit TableFill(QTableWidget* t)
      : t_(t), fit_(t->horizontalHeader()->sectionResizeMode(0) == QHeaderView::ResizeToContents) {
    if (fit_) t_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  }
  ~TableFill() {
    if (fit_) t_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  }
  TableFill(const TableFill&) = delete;
  TableFill& operator=(const TableFill&) = delete;

 private:
  QTableWidget* t_;
  bool fit_;
};

// Replaces the view's chart by an empty one with the same title: each draw
// starts from a clean chart, with no axis or series left from the last one.
QChart* FreshChart(QChartView* view) {
  QChart* old = view->chart();
  auto* chart = new QChart;
  chart->setTitle(old->title());
  StyleChart(chart);
  view->setChart(chart);
  delete old;
  return chart;
}

QLabel* Bold(const QString& text) {
  auto* l = new QLabel(text);
  QFont f = l->font();
  f.setBold(true);
  l->setFont(f);
  return l;
}

}  // namespace

// ===========================================================================
// Training
TrainingPanel::TrainingPanel(QWidget* parent) : ExportablePanel(parent) {
  auto* v = new QVBoxLayout(this);
  auto* head = new QHBoxLayout;
  step_ = new QLabel("—");
  step_->setObjectName("stepTime");
  QFont f = step_->font();
  f.setPointSizeF(f.pointSizeF() * 1.8);
  f.setBold(true);
  step_->setFont(f);
  head->addWidget(new QLabel("Training step"));
  head->addWidget(step_);
  head->addStretch(1);
  pin_ = new QPushButton("Pin for compare");
  pin_->setObjectName("pinButton");
  pin_->setToolTip("Keep this result beside the next ones (Ctrl+P)");
  head->addWidget(pin_);
  v->addLayout(head);
  reason_ = new QLabel;
  reason_->setObjectName("infeasibleReason");
  reason_->setWordWrap(true);
  reason_->setStyleSheet("QLabel { color: #d9534f; font-weight: bold; }");
  reason_->hide();
  v->addWidget(reason_);
  pinned_label_ = new QLabel;
  pinned_label_->setWordWrap(true);
  pinned_label_->hide();
  v->addWidget(pinned_label_);
  auto* split = new QSplitter(Qt::Horizontal);
  metrics_ = NewTable({"metric", "current", "pinned"});
  metrics_->setSelectionMode(QAbstractItemView::NoSelection);
  metrics_->horizontalHeader()->setStretchLastSection(false);
  metrics_->setMinimumWidth(330);
  split->addWidget(metrics_);
  auto* charts = new QSplitter(Qt::Vertical);
  time_chart_ = NewChartView("Where the step's time goes");
  memory_chart_ = NewChartView("Memory per device (fullest stage)");
  charts->addWidget(time_chart_);
  charts->addWidget(memory_chart_);
  split->addWidget(charts);
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  split->setSizes({420, 640});
  v->addWidget(split, 1);
  connect(pin_, &QPushButton::clicked, this, &TrainingPanel::TogglePin);
}

void TrainingPanel::SetInvalid(const QString& why) {
  current_.reset();
  step_->setText("—");
  step_->setProperty("iteration_s", QVariant());
  reason_->setText(why);
  reason_->show();
  Redraw();
}

void TrainingPanel::SetResult(const TrainingResult& r) {
  current_ = r;
  Redraw();
}

void TrainingPanel::TogglePin() {
  if (pinned_) pinned_.reset();
  else if (current_ && current_->estimate.feasible()) pinned_ = current_;
  pin_->setText(pinned_ ? "Unpin" : "Pin for compare");
  Redraw();
}

void TrainingPanel::Redraw() {
  if (current_) {
    const auto& e = current_->estimate;
    if (!current_->has_training) {
      step_->setText("—");
      reason_->setText("This scenario has no training section (see the Inference tab).");
      reason_->show();
    } else if (!e.feasible()) {
      step_->setText("infeasible");
      step_->setProperty("iteration_s", QVariant());
      reason_->setText("Infeasible: " + QString::fromStdString(current_->reason));
      reason_->show();
    } else {
      step_->setText(Seconds(e.iteration_s));
      step_->setProperty("iteration_s", e.iteration_s);
      reason_->hide();
    }
  }
  // Metrics: rows of (name, value of an estimate).
  struct Metric {
    const char* name;
    std::function<QString(const engine::TrainingEstimate&)> text;
  };
  const std::vector<Metric> rows = {
      {"step time", [](const auto& e) { return Seconds(e.iteration_s); }},
      {"MFU", [](const auto& e) { return Percent(e.mfu); }},
      {"HFU", [](const auto& e) { return Percent(e.hfu); }},
      // The MFU above counts attention's full s x s product; a causal kernel
      // runs half of it (TrainingEstimate::mfu_causal), which long sequences show.
      {"MFU, causal attention halved", [](const auto& e) { return Percent(e.mfu_causal); }},
      {"tokens/s", [](const auto& e) { return Number(e.tokens_per_s); }},
      {"model TFLOP/s per device", [](const auto& e) { return Number(e.tflops_per_device / 1e12); }},
      {"memory per device", [](const auto& e) { return Bytes(e.memory.total()); }},
      {"device capacity", [](const auto& e) { return Bytes(e.memory_capacity); }},
      {"in host memory per device", [](const auto& e) {
         const double host = e.memory.host_optimizer + e.memory.host_activations;
         return host > 0 ? Bytes(host) : QString("none"); }},
      {"data parallel", [](const auto& e) { return QString::number(e.dp); }},
      {"microbatches", [](const auto& e) { return QString::number(e.microbatches); }},
      {"energy per step", [](const auto& e) { return Number(e.energy_j / 3.6e6) + " kWh"; }},
      {"cost per step", [](const auto& e) { return e.cost_usd > 0 ? Usd(e.cost_usd) : QString("— (no price)"); }},
      {"training days", [](const auto& e) {
         return e.train_time_s > 0 ? Number(e.train_time_s / 86400) : QString("— (set workload.train_tokens)"); }},
      {"GPU-hours", [](const auto& e) { return e.train_time_s > 0 ? Number(e.train_device_hours) : QString("—"); }},
      {"MWh", [](const auto& e) { return e.train_time_s > 0 ? Number(e.train_energy_j / 3.6e9) : QString("—"); }},
      {"training cost", [](const auto& e) {
         return e.train_time_s > 0 && e.train_cost_usd > 0 ? Usd(e.train_cost_usd) : QString("— (no price)"); }},
  };
  metrics_->setColumnCount(pinned_ ? 3 : 2);
  metrics_->setHorizontalHeaderLabels({"metric", "current", "pinned"});
  pinned_label_->setText(pinned_ ? "Pinned for compare: " + QString::fromStdString(pinned_->label) : "");
  pinned_label_->setVisible(pinned_.has_value());
  metrics_->setRowCount(static_cast<int>(rows.size()));
  const bool show = current_ && current_->has_training && current_->estimate.feasible();
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    metrics_->setItem(i, 0, new QTableWidgetItem(rows[static_cast<size_t>(i)].name));
    auto* cell = new QTableWidgetItem(show ? rows[static_cast<size_t>(i)].text(current_->estimate) : "—");
    if (cell->text().contains("no price"))
      cell->setToolTip("Set system.price_per_device_hour (e.g. 2.5 USD/h) for costs");
    metrics_->setItem(i, 1, cell);
    if (pinned_) metrics_->setItem(i, 2, new QTableWidgetItem(rows[static_cast<size_t>(i)].text(pinned_->estimate)));
  }

  // Time breakdown: one stacked bar per result (current, pinned).
  std::vector<const TrainingResult*> bars;
  if (pinned_) bars.push_back(&*pinned_);
  if (show) bars.push_back(&*current_);
  QChart* tc = FreshChart(time_chart_);
  QChart* mc = FreshChart(memory_chart_);
  if (bars.empty()) return;
  QStringList cats;
  for (const auto* b : bars) cats << (b == &*current_ && show ? "current" : "pinned");
  {
    struct Part {
      const char* name;
      double engine::TimeBreakdown::*member;
    };
    const Part parts[] = {{"forward", &engine::TimeBreakdown::forward},
                          {"backward", &engine::TimeBreakdown::backward},
                          {"recompute", &engine::TimeBreakdown::recompute},
                          {"TP comm", &engine::TimeBreakdown::tp_comm},
                          {"CP comm", &engine::TimeBreakdown::cp_comm},
                          {"EP comm", &engine::TimeBreakdown::ep_comm},
                          {"PP bubble", &engine::TimeBreakdown::pp_bubble},
                          {"PP p2p", &engine::TimeBreakdown::pp_p2p},
                          {"DP comm", &engine::TimeBreakdown::dp_comm},
                          {"optimizer", &engine::TimeBreakdown::optimizer},
                          {"offload", &engine::TimeBreakdown::offload}};
    auto* series = new QHorizontalStackedBarSeries;
    for (const Part& p : parts) {
      bool any = false;
      for (const auto* b : bars) any = any || b->estimate.time.*p.member > 0;
      if (!any) continue;  // parts that are zero everywhere stay out of the legend
      auto* set = new QBarSet(p.name);
      for (const auto* b : bars) *set << b->estimate.time.*p.member;
      series->append(set);
    }
    tc->addSeries(series);
    auto* y = new QBarCategoryAxis;
    y->append(cats);
    auto* x = new QValueAxis;
    x->setTitleText("seconds");
    x->setLabelFormat("%.3g");
    tc->addAxis(y, Qt::AlignLeft);
    tc->addAxis(x, Qt::AlignBottom);
    series->attachAxis(y);
    series->attachAxis(x);
    // Ticks at round seconds (0, 5, 10 ...), not at fifths of the longest
    // bar (4.33, 8.67 ...) (RoundTicks); the legend beside the bars, where up to eleven
    // parts keep their names whole (below them they were cut to "backw...").
    RoundTicks(x);
    tc->legend()->setAlignment(Qt::AlignRight);
  }
  {
    auto* series = new QHorizontalStackedBarSeries;
    const char* names[] = {"weights", "gradients", "optimizer", "activations", "temporary", "free"};
    QBarSet* sets[6];
    for (int i = 0; i < 6; ++i) sets[i] = new QBarSet(names[i]);
    double top = 0;
    for (const auto* b : bars) {
      const auto& m = b->estimate.memory;
      const double gb = 1e9;
      *sets[0] << m.weights / gb;
      *sets[1] << m.gradients / gb;
      *sets[2] << m.optimizer / gb;
      *sets[3] << m.activations / gb;
      *sets[4] << m.temporary / gb;
      *sets[5] << std::max(0.0, b->estimate.memory_capacity - m.total()) / gb;
      top = std::max(top, std::max(m.total(), b->estimate.memory_capacity) / gb);
    }
    sets[5]->setColor(DarkPalette() ? QColor(70, 70, 70) : QColor(225, 225, 225));
    for (auto* s : sets) series->append(s);
    mc->addSeries(series);
    auto* y = new QBarCategoryAxis;
    y->append(cats);
    auto* x = new QValueAxis;
    x->setTitleText("GB (the bar ends at the device capacity)");
    x->setRange(0, top * 1.02);
    mc->addAxis(y, Qt::AlignLeft);
    mc->addAxis(x, Qt::AlignBottom);
    series->attachAxis(y);
    series->attachAxis(x);
    RoundTicks(x);  // 0, 20, 40 ... GB, not 20.4, 40.8 ...
  }
}

// ===========================================================================
// Timeline
TimelinePanel::TimelinePanel(ScenarioSource source, QWidget* parent)
    : ExportablePanel(parent), source_(std::move(source)) {
  auto* v = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  info_ = new QLabel("The event engine's step of the current plan appears here.");
  info_->setObjectName("timelineInfo");
  info_->setWordWrap(true);
  bar->addWidget(info_, 1);
  auto* reset = new QPushButton("Reset zoom");
  auto* trace = new QPushButton("Export trace…");
  trace->setToolTip("Chrome/Perfetto trace-event JSON (open in ui.perfetto.dev)");
  bar->addWidget(reset);
  bar->addWidget(trace);
  v->addLayout(bar);
  auto* legend = new QLabel(
      "<span style='color:#4285f4'>■</span> forward &nbsp; <span style='color:#34a853'>■</span> "
      "backward &nbsp; <span style='color:#81c995'>■</span> weight grad &nbsp; "
      "<span style='color:#fbbc05'>■</span> recompute &nbsp; <span style='color:#ab47bc'>■</span> TP "
      "&nbsp; <span style='color:#ff7043'>■</span> PP send &nbsp; <span "
      "style='color:#ea4335'>■</span> DP / ZeRO &nbsp; <span style='color:#78909c'>■</span> "
      "optimizer &nbsp; — empty track is idle (the bubble). Wheel: zoom, drag: pan, hover: details.");
  legend->setWordWrap(true);
  v->addWidget(legend);
  view_ = new TimelineView;
  v->addWidget(view_, 1);
  connect(reset, &QPushButton::clicked, view_, &TimelineView::ResetZoom);
  connect(trace, &QPushButton::clicked, this, &TimelinePanel::ExportTrace);
}

void TimelinePanel::Refresh() {
  auto s = source_();
  if (!s) {
    info_->setText("Fix the scenario's errors to simulate its step.");
    return;
  }
  const int gen = ++generation_;
  busy_ = true;
  info_->setText("Simulating the step…");
  RunAsync<TimelineResult>(this, [sc = *s] { return SimulateStep(sc); },
                           [this, gen](const TimelineResult& t) {
                             if (gen != generation_) return;
                             busy_ = false;
                             view_->SetTimeline(t);
                             if (!t.ok) {
                               info_->setText(QString::fromStdString(t.error));
                               return;
                             }
                             info_->setText(
                                 QString("Schedule %1: step %2 simulated (closed form %3), bubble "
                                         "%4 of the critical stage, %5 tasks")
                                     .arg(QString::fromStdString(t.schedule))
                                     .arg(Seconds(t.makespan_s))
                                     .arg(Seconds(t.closed_form_s))
                                     .arg(Percent(t.bubble_fraction))
                                     .arg(t.tasks.size()));
                           });
}

void TimelinePanel::ExportTrace() {
  auto s = source_();
  if (!s) return;
  const QString file = QFileDialog::getSaveFileName(this, "Export trace",
                                                    QString::fromStdString(s->name) + "-step.json",
                                                    "Trace-event JSON (*.json)");
  if (file.isEmpty()) return;
  std::string error;
  if (!WriteTrace(*s, file.toStdString(), error)) info_->setText(QString::fromStdString(error));
  else info_->setText("Trace written to " + file + " (open it in ui.perfetto.dev)");
}

// ===========================================================================
// Search
SearchPanel::SearchPanel(ScenarioSource source, QWidget* parent)
    : ExportablePanel(parent), source_(std::move(source)) {
  auto* v = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  objective_ = new QComboBox;
  objective_->addItems({"time", "cost", "energy", "tokens-per-dollar"});
  keep_ = new QSpinBox;
  keep_->setRange(1, 1000);
  keep_->setValue(50);
  keep_->setToolTip("How many of the best plans to keep (the table and the scatter show them)");
  run_ = new QPushButton("Search plans");
  run_->setObjectName("runSearch");
  run_->setToolTip("Search every plan of this model on this system (Ctrl+R)");
  cancel_ = new QPushButton("Cancel");
  cancel_->setEnabled(false);
  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  bar->addWidget(new QLabel("Objective"));
  bar->addWidget(objective_);
  bar->addWidget(new QLabel("keep best"));
  bar->addWidget(keep_);
  bar->addWidget(run_);
  bar->addWidget(cancel_);
  bar->addWidget(progress_, 1);
  v->addLayout(bar);
  status_ = new QLabel("Searches the plan space of the scenario's model on its system. Click a "
                       "row to load that plan into the scenario.");
  status_->setObjectName("searchStatus");
  status_->setWordWrap(true);
  v->addWidget(status_);
  auto* split = new QSplitter(Qt::Vertical);
  table_ = NewTable({"#", "step", "closed form", "memory", "MFU", "cost/step", "tokens/s", "devices", "tp", "pp",
                     "dp", "cp", "ep", "mb", "v", "zero", "recompute", "plan"});
  table_->setObjectName("searchTable");
  table_->setSortingEnabled(true);
  table_->setWordWrap(false);
  split->addWidget(table_);
  scatter_ = NewChartView("Plans kept: step time vs memory per device (line: Pareto front)");
  split->addWidget(scatter_);
  split->setSizes({380, 340});
  v->addWidget(split, 1);
  connect(run_, &QPushButton::clicked, this, &SearchPanel::Run);
  connect(cancel_, &QPushButton::clicked, this, &SearchPanel::Cancel);
  connect(table_, &QTableWidget::cellClicked, this, [this](int row, int) {
    const QTableWidgetItem* item = table_->item(row, 0);
    if (item == nullptr) return;
    const size_t i = static_cast<size_t>(item->data(Qt::UserRole).toDouble()) - 1;
    if (i >= outcome_.rows.size()) return;
    emit PlanChosen(outcome_.rows[i].overrides, QString::fromStdString(outcome_.rows[i].plan));
  });
}

void SearchPanel::SetKeep(int n) { keep_->setValue(n); }

void SearchPanel::Cancel() {
  if (cancel_flag_) cancel_flag_->store(true);
  status_->setText("Cancelling…");
}

void SearchPanel::Run() {
  if (running_) return;
  auto s = source_();
  if (!s) {
    status_->setText("Fix the scenario's errors before searching.");
    return;
  }
  running_ = true;
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  progress_->setValue(0);
  status_->setText("Searching…");
  cancel_flag_ = std::make_shared<std::atomic<bool>>(false);
  QPointer<QProgressBar> bar = progress_;
  auto progress = [bar](uint64_t done, uint64_t total) {
    const int value = total > 0 ? static_cast<int>(1000 * done / total) : 0;
    QMetaObject::invokeMethod(bar, [bar, value] { if (bar) bar->setValue(value); },
                              Qt::QueuedConnection);
  };
  RunAsync<SearchOutcome>(
      this,
      [sc = *s, obj = objective_->currentText().toStdString(), keep = keep_->value(), progress,
       flag = cancel_flag_] { return RunSearch(sc, obj, keep, progress, flag.get()); },
      [this](const SearchOutcome& o) {
        running_ = false;
        run_->setEnabled(true);
        cancel_->setEnabled(false);
        Show(o);
      });
}

void SearchPanel::Show(const SearchOutcome& o) {
  if (o.cancelled) {
    status_->setText("Search cancelled.");
    progress_->setValue(0);
    return;
  }
  outcome_ = o;
  progress_->setValue(1000);
  if (!o.ok) {
    status_->setText("No plan: " + QString::fromStdString(o.error));
    table_->setRowCount(0);
    FreshChart(scatter_);
    return;
  }
  QString counts = QString("%1 candidates; %2 evaluated: %3 fit, %4 out of memory")
                       .arg(Grouped(o.candidates), Grouped(o.evaluated), Grouped(o.feasible),
                            Grouped(o.out_of_memory));
  if (o.refused > 0) counts += QString(", %1 break a pipeline rule").arg(Grouped(o.refused));
  status_->setText(counts + QString("; %1 s. Click a row to load that plan into the scenario.")
                                .arg(Number(o.wall_s, 3)));
  table_->setSortingEnabled(false);
  const TableFill fill(table_);
  table_->setRowCount(static_cast<int>(o.rows.size()));
  for (int i = 0; i < static_cast<int>(o.rows.size()); ++i) {
    const SearchRow& r = o.rows[static_cast<size_t>(i)];
    int c = 0;
    table_->setItem(i, c++, new NumberItem(QString::number(i + 1), i + 1));
    table_->setItem(i, c++, new NumberItem(Seconds(r.iteration_s), r.iteration_s));
    table_->setItem(i, c++, new NumberItem(Seconds(r.closed_form_s), r.closed_form_s));
    table_->setItem(i, c++, new NumberItem(Bytes(r.memory_bytes), r.memory_bytes));
    table_->setItem(i, c++, new NumberItem(Percent(r.mfu), r.mfu));
    table_->setItem(i, c++, new NumberItem(r.cost_usd > 0 ? Usd(r.cost_usd) : QString("—"), r.cost_usd));
    table_->setItem(i, c++, new NumberItem(Number(r.tokens_per_s), r.tokens_per_s));
    for (int64_t k : {r.devices, r.tp, r.pp, r.dp, r.cp, r.ep, r.micro_batch, r.interleave, r.zero})
      table_->setItem(i, c++, new NumberItem(QString::number(k), static_cast<double>(k)));
    table_->setItem(i, c++, new QTableWidgetItem(QString::fromStdString(r.recompute)));
    table_->setItem(i, c++, new QTableWidgetItem(QString::fromStdString(r.plan)));
  }
  table_->setSortingEnabled(true);
  table_->sortByColumn(0, Qt::AscendingOrder);

  QChart* chart = FreshChart(scatter_);
  auto* all = new QScatterSeries;
  all->setName("plans kept");
  all->setMarkerSize(7);
  for (const auto& r : o.rows) all->append(r.iteration_s, r.memory_bytes / 1e9);
  auto* front = new QLineSeries;
  front->setName("Pareto front (no plan is both faster and smaller)");
  front->setPointsVisible(true);
  for (size_t i : ParetoFront(o.rows)) front->append(o.rows[i].iteration_s, o.rows[i].memory_bytes / 1e9);
  chart->addSeries(all);
  chart->addSeries(front);
  auto* x = new QValueAxis;
  x->setTitleText("step time (s)");
  x->setLabelFormat("%.3g");
  auto* y = new QValueAxis;
  y->setTitleText("memory per device (GB)");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (auto* s : {static_cast<QAbstractSeries*>(all), static_cast<QAbstractSeries*>(front)}) {
    s->attachAxis(x);
    s->attachAxis(y);
  }
  double lo = std::numeric_limits<double>::infinity(), hi = 0, mlo = lo, mhi = 0;
  for (const auto& r : o.rows) {
    lo = std::min(lo, r.iteration_s);
    hi = std::max(hi, r.iteration_s);
    mlo = std::min(mlo, r.memory_bytes / 1e9);
    mhi = std::max(mhi, r.memory_bytes / 1e9);
  }
  const double pad = std::max(hi - lo, hi * 0.01) * 0.05, mpad = std::max(mhi - mlo, mhi * 0.01) * 0.05;
  x->setRange(lo - pad, hi + pad);
  y->setRange(std::max(0.0, mlo - mpad), mhi + mpad);
  y->applyNiceNumbers();  // memory ticks at round GB (64, 68, 72 ...), not 65, 69, 73, 77, 80
  x->setLabelFormat(AxisLabelFormat(x->min(), x->max(), x->tickCount()));
  y->setLabelFormat(AxisLabelFormat(y->min(), y->max(), y->tickCount()));
}

// ===========================================================================
// Sweep
namespace {

struct MetricDef {
  const char* name;
  double (*value)(const SweepRow&);
};
const MetricDef kMetrics[] = {
    {"step time (s)", [](const SweepRow& r) { return r.iteration_s; }},
    {"tokens/s", [](const SweepRow& r) { return r.tokens_per_s; }},
    {"MFU (%)", [](const SweepRow& r) { return 100 * r.mfu; }},
    {"memory per device (GB)", [](const SweepRow& r) { return r.memory_bytes / 1e9; }},
    {"cost per step (USD)", [](const SweepRow& r) { return r.cost_usd; }},
    {"training days", [](const SweepRow& r) { return r.train_time_s / 86400; }},
    {"training cost (M USD)", [](const SweepRow& r) { return r.train_cost_usd / 1e6; }},
};

}  // namespace

SweepPanel::SweepPanel(const ScenarioDoc* doc, ScenarioSource source, QWidget* parent)
    : ExportablePanel(parent), doc_(doc), source_(std::move(source)) {
  auto* v = new QVBoxLayout(this);
  auto* box = new QGroupBox("What-if grid over registry keys");
  auto* grid = new QGridLayout(box);
  const QString defaults[2][3] = {{"system.network[1].bandwidth", "200 Gb/s", "1600 Gb/s"},
                                  {"system.device.memory_capacity", "80 GB", "160 GB"}};
  for (int i = 0; i < 2; ++i) {
    AxisInputs& a = axes_[i];
    a.on = new QCheckBox(i == 0 ? "axis 1" : "axis 2");
    a.on->setChecked(i == 0);
    a.path = new QComboBox;
    a.path->setEditable(true);
    a.path->setMinimumContentsLength(28);
    a.from = new QLineEdit(defaults[i][1]);
    a.to = new QLineEdit(defaults[i][2]);
    a.points = new QSpinBox;
    a.points->setRange(2, 64);
    a.points->setValue(i == 0 ? 6 : 3);
    a.log = new QCheckBox("log");
    a.path->setCurrentText(defaults[i][0]);
    a.path->setObjectName(QString("sweepAxis%1").arg(i + 1));
    int c = 0;
    grid->addWidget(a.on, i, c++);
    grid->addWidget(a.path, i, c++);
    grid->addWidget(new QLabel("from"), i, c++);
    grid->addWidget(a.from, i, c++);
    grid->addWidget(new QLabel("to"), i, c++);
    grid->addWidget(a.to, i, c++);
    grid->addWidget(new QLabel("points"), i, c++);
    grid->addWidget(a.points, i, c++);
    grid->addWidget(a.log, i, c++);
  }
  grid->setColumnStretch(1, 2);
  auto* row = new QHBoxLayout;
  each_ = new QComboBox;
  each_->addItems({"estimate the scenario's plan", "search the best plan at each point"});
  db_ = new QLineEdit(QDir(QDir::homePath()).filePath("orrery-what-if.sqlite"));
  db_->setPlaceholderText("result store (.sqlite)");
  db_->setToolTip("The SQLite result store the sweep writes (and resumes) into");
  auto* browse = new QPushButton("Store…");
  run_ = new QPushButton("Run sweep");
  stop_ = new QPushButton("Stop");
  stop_->setToolTip("Stop after the batch being stored; Run sweep resumes");
  stop_->setEnabled(false);
  auto* open = new QPushButton("Open store…");
  open->setToolTip("Show the sweep stored in a SQLite result store");
  row->addWidget(each_);
  row->addWidget(db_, 1);
  row->addWidget(browse);
  row->addWidget(run_);
  row->addWidget(stop_);
  row->addWidget(open);
  grid->addLayout(row, 2, 0, 1, 9);
  v->addWidget(box);
  auto* bar = new QHBoxLayout;
  metric_ = new QComboBox;
  for (const auto& m : kMetrics) metric_->addItem(m.name);
  progress_ = new QProgressBar;
  progress_->setValue(0);
  view_ = new QComboBox;
  view_->setObjectName("sweepView");
  view_->addItems({"as lines", "as heatmap"});
  view_->setToolTip("Heatmap: the metric over both axes (needs two numeric axes)");
  bar->addWidget(new QLabel("Show"));
  bar->addWidget(metric_);
  bar->addWidget(view_);
  bar->addWidget(progress_, 1);
  v->addLayout(bar);
  status_ = new QLabel("Each point is stored in the SQLite file as it finishes; reopen it any time.");
  status_->setObjectName("sweepStatus");
  status_->setWordWrap(true);
  v->addWidget(status_);
  auto* split = new QSplitter(Qt::Vertical);
  chart_ = NewChartView("Sweep");
  split->addWidget(chart_);
  table_ = NewTable({"point", "parameters", "status", "step", "tokens/s", "MFU", "memory", "reason"});
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
  v->addWidget(split, 1);

  connect(browse, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, "Result store", db_->text(),
                                                   "SQLite (*.sqlite *.db)",
                                                   nullptr, QFileDialog::DontConfirmOverwrite);
    if (!f.isEmpty()) db_->setText(f);
  });
  connect(open, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, "Open result store", db_->text(),
                                                   "SQLite (*.sqlite *.db);;All files (*)");
    if (!f.isEmpty()) OpenStore(f);
  });
  connect(run_, &QPushButton::clicked, this, &SweepPanel::Run);
  connect(stop_, &QPushButton::clicked, this, &SweepPanel::Cancel);
  connect(metric_, &QComboBox::currentIndexChanged, this, &SweepPanel::Redraw);
  connect(view_, &QComboBox::currentIndexChanged, this, &SweepPanel::Redraw);
}

void SweepPanel::Cancel() {
  if (cancel_flag_) cancel_flag_->store(true);
}

void SweepPanel::SetHeatmap(bool on) { view_->setCurrentIndex(on ? 1 : 0); }

void SweepPanel::EnableSecondAxis(bool on) { axes_[1].on->setChecked(on); }

void SweepPanel::SetStorePath(const QString& db) { db_->setText(db); }

void SweepPanel::FillKeys() {
  // Keys a range makes sense for: numbers and quantities of the registry.
  auto s = source_();
  if (!s) return;
  QStringList keys;
  for (const auto& f : FormFields(*s))
    if (f.info.type == base::ParamType::kInt || f.info.type == base::ParamType::kReal ||
        f.info.type == base::ParamType::kQuantity)
      keys << QString::fromStdString(f.path);
  for (auto& a : axes_) {
    const QString keep = a.path->currentText();
    a.path->clear();
    a.path->addItems(keys);
    a.path->setCurrentText(keep);
  }
}

bool SweepPanel::OpenStore(const QString& db) {
  db_->setText(db);
  shown_db_ = db;
  data_ = ReadSweepStore(db.toStdString());
  if (!data_.ok) {
    status_->setText(QString::fromStdString(data_.error));
    Redraw();
    return false;
  }
  status_->setText(QString("%1: sweep '%2', %3 of %4 points stored")
                       .arg(db, QString::fromStdString(data_.name))
                       .arg(data_.rows.size())
                       .arg(data_.points));
  Redraw();
  emit StoreOpened(db);
  return true;
}

void SweepPanel::Reload() {
  if (shown_db_.isEmpty()) return;
  data_ = ReadSweepStore(shown_db_.toStdString());
  Redraw();
}

void SweepPanel::Run() {
  if (running_) return;
  if (!source_()) {
    status_->setText("Fix the scenario's errors before sweeping.");
    return;
  }
  if (db_->text().trimmed().isEmpty()) {
    status_->setText("Choose a result store file first (Store…).");
    return;
  }
  std::vector<SweepAxisAsk> axes;
  for (const auto& a : axes_) {
    if (!a.on->isChecked()) continue;
    axes.push_back({a.path->currentText().trimmed().toStdString(), a.from->text().toStdString(),
                    a.to->text().toStdString(), a.points->value(), a.log->isChecked()});
  }
  running_ = true;
  run_->setEnabled(false);
  stop_->setEnabled(true);
  cancel_flag_ = std::make_shared<std::atomic<bool>>(false);
  progress_->setValue(0);
  shown_db_ = db_->text().trimmed();
  status_->setText("Sweeping into " + shown_db_ + "…");
  QPointer<SweepPanel> self = this;
  auto progress = [self](uint64_t done, uint64_t total) {
    QMetaObject::invokeMethod(self, [self, done, total] {
      if (!self) return;
      self->progress_->setMaximum(static_cast<int>(total));
      self->progress_->setValue(static_cast<int>(done));
      self->Reload();  // the chart fills from the store as batches commit
    }, Qt::QueuedConnection);
  };
  const ScenarioDoc doc = *doc_;
  RunAsync<std::string>(
      this,
      [doc, axes, search = each_->currentIndex() == 1, db = shown_db_.toStdString(), progress,
       flag = cancel_flag_] { return RunSweepInto(doc, axes, search, db, progress, flag.get()); },
      [this](const std::string& error) {
        running_ = false;
        run_->setEnabled(true);
        stop_->setEnabled(false);
        if (!error.empty()) {
          status_->setText(QString::fromStdString(error).trimmed());
          return;
        }
        OpenStore(shown_db_);
      });
}

void SweepPanel::Redraw() {
  QChart* chart = FreshChart(chart_);
  table_->setRowCount(0);
  if (!data_.ok || data_.axes.empty()) return;
  const MetricDef& m = kMetrics[std::max(0, metric_->currentIndex())];
  const std::string& x_path = data_.axes[0];
  chart->setTitle(QString::fromStdString(data_.name) + ": " + m.name + " vs " +
                  QString::fromStdString(x_path));
  // One series per value of the second axis (or one series).
  std::vector<std::pair<std::string, QLineSeries*>> series;
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  bool x_numeric = true;
  const TableFill fill(table_);
  table_->setRowCount(static_cast<int>(data_.rows.size()));
  int row = 0;
  for (const SweepRow& r : data_.rows) {
    QStringList params;
    for (const auto& [k, val] : r.params) params << QString::fromStdString(k + "=" + val);
    int c = 0;
    table_->setItem(row, c++, new NumberItem(QString::number(r.index), static_cast<double>(r.index)));
    table_->setItem(row, c++, new QTableWidgetItem(params.join(", ")));
    table_->setItem(row, c++, new QTableWidgetItem(QString::fromStdString(r.status)));
    table_->setItem(row, c++, new NumberItem(Seconds(r.iteration_s), r.iteration_s));
    table_->setItem(row, c++, new NumberItem(Number(r.tokens_per_s), r.tokens_per_s));
    table_->setItem(row, c++, new NumberItem(Percent(r.mfu), r.mfu));
    table_->setItem(row, c++, new NumberItem(Bytes(r.memory_bytes), r.memory_bytes));
    table_->setItem(row, c++, new QTableWidgetItem(QString::fromStdString(r.reason)));
    ++row;
    if (r.status != "ok" || r.params.empty()) continue;
    const double x = NumericValue(x_path, r.params[0].second);
    if (!std::isfinite(x)) {
      x_numeric = false;
      continue;
    }
    const std::string key = r.params.size() > 1 ? r.params[1].first + " = " + r.params[1].second : m.name;
    QLineSeries* s = nullptr;
    for (auto& [k, ls] : series)
      if (k == key) s = ls;
    if (s == nullptr) {
      s = new QLineSeries;
      s->setName(QString::fromStdString(key));
      s->setPointsVisible(true);
      series.emplace_back(key, s);
    }
    const double y = m.value(r);
    s->append(x, y);  // SI; scaled to the display unit below
    xlo = std::min(xlo, x);
    xhi = std::max(xhi, x);
    ylo = std::min(ylo, y);
    yhi = std::max(yhi, y);
  }
  if (view_->currentIndex() == 1) {
    for (auto& [k, ls] : series) delete ls;  // never added to the chart
    return DrawHeatmap(chart, std::max(0, metric_->currentIndex()));
  }
  if (series.empty()) {
    chart->setTitle(x_numeric ? "No feasible point stored yet" : "The first axis is not numeric");
    return;
  }
  const DisplayUnit unit = UnitFor(x_path, std::max(std::abs(xlo), std::abs(xhi)));
  for (auto& [k, s] : series) {
    QList<QPointF> pts = s->points();
    for (QPointF& pt : pts) pt.setX(pt.x() / unit.divide);
    s->replace(pts);
  }
  xlo /= unit.divide;
  xhi /= unit.divide;
  auto* x = new QValueAxis;
  x->setTitleText(QString::fromStdString(x_path) +
                  (unit.unit.empty() ? QString() : " (" + QString::fromStdString(unit.unit) + ")"));
  x->setLabelFormat("%.4g");
  auto* y = new QValueAxis;
  y->setTitleText(m.name);
  y->setLabelFormat("%.4g");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (auto& [k, s] : series) {
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  const double xpad = (xhi - xlo) * 0.03 + (xhi == xlo ? std::abs(xhi) * 0.1 + 1 : 0);
  const double ypad = (yhi - ylo) * 0.08 + (yhi == ylo ? std::abs(yhi) * 0.1 + 1e-9 : 0);
  x->setRange(xlo - xpad, xhi + xpad);
  y->setRange(std::max(0.0, ylo - ypad), yhi + ypad);
  // Ticks at round values of the swept key and the metric (25, 50 ... GB/s;
  // 13.20, 13.25 ... s), not at fifths of the padded range (19.75, 66.13).
  RoundTicks(x);
  RoundTicks(y);
}

namespace {

// The viridis colour map (van der Walt and Smith 2015, matplotlib's default):
// perceptually uniform and readable in grey and by colour-blind readers; five
// of its anchors, linearly interpolated. `t` in [0, 1].
QColor Viridis(double t) {
  static const int kAnchors[5][3] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  t = std::clamp(t, 0.0, 1.0) * 4;
  const int i = std::min(3, static_cast<int>(t));
  const double f = t - i;
  auto mix = [&](int c) { return static_cast<int>(std::lround(kAnchors[i][c] + f * (kAnchors[i + 1][c] - kAnchors[i][c]))); };
  return QColor(mix(0), mix(1), mix(2));
}

}  // namespace

void SweepPanel::DrawHeatmap(QChart* chart, int metric) {
  const MetricDef& m = kMetrics[metric];
  if (data_.axes.size() < 2) {
    chart->setTitle("A heatmap needs two axes (this sweep has one)");
    return;
  }
  const std::string& x_path = data_.axes[0];
  const std::string& y_path = data_.axes[1];
  struct Cell {
    double x, y, v;
  };
  std::vector<Cell> cells;
  std::vector<double> xs, ys;
  for (const SweepRow& r : data_.rows) {
    if (r.status != "ok" || r.params.size() < 2) continue;
    const double x = NumericValue(x_path, r.params[0].second), y = NumericValue(y_path, r.params[1].second);
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    cells.push_back({x, y, m.value(r)});
    xs.push_back(x);
    ys.push_back(y);
  }
  if (cells.empty()) {
    chart->setTitle("No feasible point with two numeric axes stored yet");
    return;
  }
  auto distinct = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  distinct(xs);
  distinct(ys);
  const DisplayUnit ux = UnitFor(x_path, std::max(std::abs(xs.front()), std::abs(xs.back())));
  const DisplayUnit uy = UnitFor(y_path, std::max(std::abs(ys.front()), std::abs(ys.back())));
  double vlo = cells.front().v, vhi = vlo;
  for (const Cell& c : cells) {
    vlo = std::min(vlo, c.v);
    vhi = std::max(vhi, c.v);
  }
  // One square per point, sized to tile the plot: the grid's columns and rows
  // share the chart's width and height.
  const QSizeF area = chart_->size();
  const double cell = 0.8 * std::min(area.width() / static_cast<double>(xs.size() + 1),
                                     area.height() / static_cast<double>(ys.size() + 1));
  auto* x = new QValueAxis;
  x->setTitleText(QString::fromStdString(x_path) + (ux.unit.empty() ? QString() : " (" + QString::fromStdString(ux.unit) + ")"));
  x->setLabelFormat("%.4g");
  auto* y = new QValueAxis;
  y->setTitleText(QString::fromStdString(y_path) + (uy.unit.empty() ? QString() : " (" + QString::fromStdString(uy.unit) + ")"));
  y->setLabelFormat("%.4g");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (const Cell& c : cells) {
    auto* s = new QScatterSeries;
    s->setName(QString("%1 = %2").arg(m.name).arg(c.v, 0, 'g', 4));
    s->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
    s->setMarkerSize(std::max(6.0, cell));
    s->setColor(Viridis(vhi > vlo ? (c.v - vlo) / (vhi - vlo) : 0.5));
    s->setBorderColor(Qt::transparent);
    s->append(c.x / ux.divide, c.y / uy.divide);
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  chart->legend()->hide();
  // Half a step of padding so the edge squares are whole.
  auto pad = [](const std::vector<double>& v, double divide) {
    const double step = v.size() > 1 ? (v.back() - v.front()) / static_cast<double>(v.size() - 1) : std::abs(v.front()) * 0.5 + 1;
    return std::pair<double, double>{(v.front() - step / 2) / divide, (v.back() + step / 2) / divide};
  };
  const auto [x0, x1] = pad(xs, ux.divide);
  const auto [y0, y1] = pad(ys, uy.divide);
  x->setRange(x0, x1);
  y->setRange(y0, y1);
  chart->setTitle(QString::fromStdString(data_.name) + ": " + m.name +
                  QString(" (dark %1 to light %2)").arg(vlo, 0, 'g', 4).arg(vhi, 0, 'g', 4));
}

// ===========================================================================
// Inference
InferencePanel::InferencePanel(ScenarioSource source, QWidget* parent)
    : ExportablePanel(parent), source_(std::move(source)) {
  auto* v = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  auto* note = new QLabel("The deployment is the <b>inference</b> tab of the scenario form "
                          "(tp, pp, ep, datatypes, scheduler, SLO).");
  note->setWordWrap(true);
  bar->addWidget(note, 1);
  auto* run = new QPushButton("Re-run");
  bar->addWidget(run);
  v->addLayout(bar);
  summary_ = new QLabel;
  summary_->setObjectName("inferenceSummary");
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(summary_);
  chart_ = NewChartView("Latency vs offered load (Poisson arrivals)");
  v->addWidget(chart_, 1);
  connect(run, &QPushButton::clicked, this, &InferencePanel::Refresh);
}

void InferencePanel::Refresh() {
  auto s = source_();
  if (!s) {
    summary_->setText("Fix the scenario's errors to estimate serving.");
    return;
  }
  if (cancel_flag_) cancel_flag_->store(true);
  cancel_flag_ = std::make_shared<std::atomic<bool>>(false);
  const int gen = ++generation_;
  busy_ = true;
  summary_->setText("Simulating request streams…");
  RunAsync<InferenceOutcome>(this,
                             [sc = *s, flag = cancel_flag_] { return RunInference(sc, 10, flag.get()); },
                             [this, gen](const InferenceOutcome& o) {
                               if (gen != generation_) return;
                               busy_ = false;
                               Show(o);
                             });
}

void InferencePanel::Show(const InferenceOutcome& o) {
  QChart* chart = FreshChart(chart_);
  if (!o.ok) {
    summary_->setText("<span style='color:#d9534f'>" +
                      QString::fromStdString(o.error).toHtmlEscaped() + "</span>");
    return;
  }
  QString rate = o.slo_set
                     ? (o.max_rate_found ? "<b>" + Number(o.max_rate) + " req/s</b> (highest rate meeting the SLO)"
                                         : "no rate meets the SLO: " + QString::fromStdString(o.max_rate_reason))
                     : QString("no SLO set (inference.slo_ttft, inference.slo_tpot)");
  summary_->setText(
      QString("Static batch: TTFT %1, TPOT %2, %3 output tokens/s per replica. Memory per device: "
              "weights %4, KV cache %5, activations %6 of %7 usable (%8 capacity); largest batch %9; "
              "KV pool %10 tokens. Serving: %11.")
          .arg(Seconds(o.ttft_s), Seconds(o.tpot_s), Number(o.tokens_per_s), Bytes(o.weights_bytes),
               Bytes(o.kv_bytes), Bytes(o.activation_bytes), Bytes(o.usable_bytes),
               Bytes(o.capacity_bytes), QString::number(o.max_batch))
          .arg(Number(o.kv_capacity_tokens), rate));
  if (o.curve.empty()) return;
  struct Line {
    const char* name;
    double InferencePoint::*member;
  };
  const Line lines[] = {{"TTFT p50", &InferencePoint::ttft_p50},
                        {"TTFT p99", &InferencePoint::ttft_p99},
                        {"TPOT p50", &InferencePoint::tpot_p50},
                        {"TPOT p99", &InferencePoint::tpot_p99}};
  auto* x = new QValueAxis;
  x->setTitleText("offered load (requests/s)");
  x->setLabelFormat("%.3g");
  auto* y = new QLogValueAxis;
  y->setTitleText("latency (ms, log)");
  // Decades as plain numbers (0.1, 10, 1000, 10000), not 1e+03.
  y->setLabelFormat("%g");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const Line& l : lines) {
    auto* s = new QLineSeries;
    s->setName(l.name);
    s->setPointsVisible(true);
    for (const auto& p : o.curve) {
      const double ms = std::max(1e-3, p.*l.member * 1e3);
      s->append(p.rate, ms);
      lo = std::min(lo, ms);
      hi = std::max(hi, ms);
    }
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  y->setRange(lo / 1.5, hi * 1.5);
  x->setRange(0, o.curve.back().rate * 1.02);
  RoundTicks(x);  // ticks at round rates (0, 5, 10 ...), not 5.61, 11.2 ...
  if (o.max_rate_found) {
    auto* mark = new QLineSeries;
    mark->setName(QString("max rate meeting the SLO: %1 req/s").arg(Number(o.max_rate)));
    QPen pen(QColor(217, 83, 79));
    pen.setStyle(Qt::DashLine);
    pen.setWidth(2);
    mark->setPen(pen);
    mark->append(o.max_rate, lo / 1.5);
    mark->append(o.max_rate, hi * 1.5);
    chart->addSeries(mark);
    mark->attachAxis(x);
    mark->attachAxis(y);
  }
}

// ===========================================================================
// Network
class NetworkDiagram : public QWidget {
 public:
  using QWidget::QWidget;
  void Set(const NetworkView& v) {
    v_ = v;
    update();
  }
  QSize sizeHint() const override { return {600, 220}; }

 protected:
  // Tiers drawn bottom-up: devices, then each tier's domains as boxes
  // spanning the devices they join.
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), palette().base());
    if (!v_.ok || v_.devices <= 0) {
      p.setPen(palette().text().color());
      p.drawText(rect(), Qt::AlignCenter, QString::fromStdString(v_.error));
      return;
    }
    const int levels = static_cast<int>(v_.tiers.size()) + 1;
    const double band = std::max(24.0, double(height() - 8) / levels);
    const double left = 8, width_px = width() - 16;
    const QColor colors[] = {QColor(66, 133, 244), QColor(52, 168, 83), QColor(251, 188, 5),
                             QColor(171, 71, 188)};
    // Devices: at most 64 drawn; the rest summarised.
    const int64_t shown = std::min<int64_t>(v_.devices, 64);
    const double cell = width_px / shown;
    const double y0 = height() - band;
    p.setPen(palette().text().color());
    for (int64_t i = 0; i < shown; ++i) {
      const QRectF r(left + i * cell + 1, y0 + 4, std::max(1.0, cell - 2), band - 8);
      p.fillRect(r, palette().mid());
    }
    p.drawText(QRectF(left, y0, width_px, band), Qt::AlignCenter,
               QString("%1 x %2%3").arg(v_.devices).arg(QString::fromStdString(v_.device))
                   .arg(v_.devices > shown ? " (64 drawn)" : ""));
    for (size_t t = 0; t < v_.tiers.size(); ++t) {
      const TierView& tier = v_.tiers[t];
      const double y = y0 - (t + 1) * band;
      const int64_t domain = std::max<int64_t>(1, std::min(tier.domain, v_.devices));
      const int64_t groups = std::max<int64_t>(1, v_.devices / domain);
      const int64_t drawn = std::min<int64_t>(groups, 32);
      const double gw = width_px / drawn;
      QColor c = colors[t % 4];
      c.setAlpha(150);
      for (int64_t g = 0; g < drawn; ++g)
        p.fillRect(QRectF(left + g * gw + 2, y + 3, gw - 4, band - 6), c);
      p.setPen(palette().text().color());
      p.drawText(QRectF(left, y, width_px, band), Qt::AlignCenter,
                 QString("%1: %2, %3 domain(s) of %4, %5 per device%6")
                     .arg(QString::fromStdString(tier.name), QString::fromStdString(tier.topology))
                     .arg(groups)
                     .arg(domain)
                     .arg(QString::fromStdString(base::FormatQuantity(tier.bandwidth, base::Dimension::kBandwidth)))
                     .arg(tier.switches > 0 ? QString(", %1 switches").arg(tier.switches) : QString()));
    }
  }

 private:
  NetworkView v_;
};

NetworkPanel::NetworkPanel(ScenarioSource source, QWidget* parent)
    : ExportablePanel(parent), source_(std::move(source)) {
  auto* v = new QVBoxLayout(this);
  diagram_ = new NetworkDiagram;
  diagram_->setMinimumHeight(160);
  v->addWidget(Bold("Tiers (outermost on top)"));
  v->addWidget(diagram_, 2);
  parts_ = NewTable({"tier", "topology", "domain", "bandwidth", "latency", "switch levels",
                     "switches", "links", "transceivers", "NIC ports", "cost", "power"});
  parts_->horizontalHeader()->setStretchLastSection(false);  // the power beside the cost, not a screen away
  v->addWidget(parts_, 1);
  totals_ = new QLabel;
  totals_->setWordWrap(true);
  v->addWidget(totals_);
  auto* row = new QHBoxLayout;
  row->addWidget(new QLabel("Compare the same plan on"));
  other_ = new QComboBox;
  other_->setToolTip("Another fabric for the same devices, model and plan");
  other_->addItem("outermost tier as rail-only", "topology:rail-only");
  other_->addItem("outermost tier as fat-tree", "topology:fat-tree");
  other_->addItem("outermost tier as one switch", "topology:switch");
  for (const auto& n : ListPresets().systems)
    other_->addItem("network of " + QString::fromStdString(n), QString::fromStdString("preset:" + n));
  row->addWidget(other_);
  row->addStretch(1);
  v->addLayout(row);
  compare_ = NewChartView("Network cost, network power and step time, relative to the current system");
  note_ = new QLabel;
  note_->setWordWrap(true);
  v->addWidget(note_);
  v->addWidget(compare_, 2);
  connect(other_, &QComboBox::currentIndexChanged, this, &NetworkPanel::Refresh);
}

void NetworkPanel::Refresh() {
  auto s = source_();
  if (!s) {
    totals_->setText("Fix the scenario's errors to see its network.");
    return;
  }
  const NetworkView a = DescribeNetwork(*s);
  diagram_->Set(a);
  parts_->setRowCount(static_cast<int>(a.tiers.size()));
  for (int i = 0; i < static_cast<int>(a.tiers.size()); ++i) {
    const TierView& t = a.tiers[static_cast<size_t>(i)];
    int c = 0;
    parts_->setItem(i, c++, new QTableWidgetItem(QString::fromStdString(t.name)));
    parts_->setItem(i, c++, new QTableWidgetItem(QString::fromStdString(t.topology)));
    parts_->setItem(i, c++, new NumberItem(QString::number(t.domain), static_cast<double>(t.domain)));
    parts_->setItem(i, c++, new NumberItem(QString::fromStdString(base::FormatQuantity(t.bandwidth, base::Dimension::kBandwidth)), t.bandwidth));
    parts_->setItem(i, c++, new NumberItem(Seconds(t.latency), t.latency));
    for (int64_t k : {t.levels, t.switches, t.links, t.transceivers, t.nic_ports})
      parts_->setItem(i, c++, new NumberItem(QString::number(k), static_cast<double>(k)));
    parts_->setItem(i, c++, new NumberItem(Usd(t.cost_usd), t.cost_usd));
    parts_->setItem(i, c++, new NumberItem(Number(t.power_w / 1e3) + " kW", t.power_w));
  }
  totals_->setText(QString("%1 (%2 devices, prices: %3): devices %4 and %5 kW; network %6 and %7 kW. "
                           "Step of the current plan: %8.")
                       .arg(QString::fromStdString(a.system))
                       .arg(a.devices)
                       .arg(QString::fromStdString(a.prices), Usd(a.device_cost),
                            Number(a.device_power / 1e3), Usd(a.network_cost),
                            Number(a.network_power / 1e3),
                            a.iteration_s > 0 ? Seconds(a.iteration_s)
                                              : "infeasible (" + QString::fromStdString(a.reason) + ")"));
  const QString choice = other_->currentData().toString();
  const NetworkView b =
      choice.startsWith("topology:")
          ? DescribeNetworkWithTopology(*s, choice.mid(9).toStdString())
          : DescribeNetworkWith(*s, choice.mid(7).toStdString());
  QChart* chart = FreshChart(compare_);
  if (!b.ok) {
    chart->setTitle(QString::fromStdString(b.error));
    return;
  }
  chart->setTitle("Network cost, network power and step time, relative to " +
                  QString::fromStdString(a.system) + " (= 100 %)");
  note_->setText(QString("%1: network %2 and %3 kW, step %4. Parts are counted only for tiers with a "
                         "switch radix (system.network[i].radix).")
                     .arg(QString::fromStdString(b.system), Usd(b.network_cost),
                          Number(b.network_power / 1e3),
                          b.iteration_s > 0 ? Seconds(b.iteration_s)
                                            : "infeasible (" + QString::fromStdString(b.reason) + ")"));
  auto rel = [](double x, double base) { return base > 0 ? 100 * x / base : 0.0; };
  auto* sa = new QBarSet(QString::fromStdString(a.system));
  auto* sb = new QBarSet(QString::fromStdString(b.system) + " (" + QString::number(b.devices) +
                         " " + QString::fromStdString(b.device) + ")");
  *sa << 100 << 100 << (a.iteration_s > 0 ? 100 : 0);
  *sb << std::round(rel(b.network_cost, a.network_cost))
      << std::round(rel(b.network_power, a.network_power))
      << std::round(rel(b.iteration_s, a.iteration_s));
  auto* series = new QBarSeries;
  series->append(sa);
  series->append(sb);
  series->setLabelsVisible(true);
  series->setLabelsFormat("@value %");
  chart->addSeries(series);
  auto* x = new QBarCategoryAxis;
  x->append({"network cost", "network power", "step time"});
  auto* y = new QValueAxis;
  // Short enough to stand whole beside the bars ("% of the current syst..."
  // was cut); the chart's title names the current system.
  y->setTitleText("% of current");
  double top = 100;
  for (int i = 0; i < sb->count(); ++i) top = std::max(top, sb->at(i));
  y->setRange(0, top * 1.15);
  RoundTicks(y);  // 0, 20 ... 100 %, not 0, 29, 57, 86
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
}

}  // namespace orrery::gui

// ===========================================================================
// Validation

namespace orrery::gui {

namespace {

// A measured or predicted figure in its metric's unit.
QString MetricText(const std::string& metric, double v) {
  if (engine::MetricIsTime(metric)) return Seconds(v);
  if (metric == "mfu") return Percent(v);
  return Number(v) + " TFLOP/s";
}

}  // namespace

ValidationPanel::ValidationPanel(QWidget* parent) : ExportablePanel(parent) {
  auto* v = new QVBoxLayout(this);
  auto* row = new QHBoxLayout;
  row->addWidget(new QLabel("Group the measured runs by"));
  group_ = new QComboBox;
  group_->setObjectName("validationGroup");
  group_->setToolTip("What each run was predicted with: its source, device, framework, GEMM precision "
                     "or recompute mode (orrery validate --by)");
  group_->addItem("source", "source");
  for (const auto& f : ValidationFacets())
    if (f != "metric") group_->addItem(QString::fromStdString(f), QString::fromStdString(f));
  row->addWidget(group_);
  row->addSpacing(16);
  row->addWidget(new QLabel("predicted with"));
  engine_ = new QComboBox;
  engine_->setObjectName("validationEngine");
  engine_->setToolTip("The closed form (what search and sweeps run), or each run's plan replayed on the event "
                      "engine with the schedule's own bubble and overlap (orrery validate --engine event)");
  engine_->addItem("the closed form", "closed");
  engine_->addItem("the event engine", "event");
  row->addWidget(engine_);
  row->addStretch(1);
  v->addLayout(row);
  summary_ = new QLabel("Predicting the measured runs…");
  summary_->setWordWrap(true);
  v->addWidget(summary_);
  chart_ = NewChartView("Each measured run: predicted over measured speed, less 1 (+ = predicted faster)");
  chart_->setMinimumHeight(260);
  groups_ = NewTable({"group", "runs", "MAPE", "bias", "max |error|"});
  groups_->setObjectName("validationGroups");
  // Columns as wide as their figures, side by side: a stretched last column
  // put the largest error a screen's width from its group's name.
  groups_->horizontalHeader()->setStretchLastSection(false);
  groups_->setSortingEnabled(true);
  groups_->sortItems(0, Qt::AscendingOrder);
  // One line a group, as the runs table below: at the style's default row
  // height nine device groups overflowed the chart's height.
  groups_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  groups_->verticalHeader()->setDefaultSectionSize(groups_->fontMetrics().height() + 4);
  // Beside the chart, as tall as it: every group's row in view (under the
  // chart it showed two of seven device groups at a time).
  auto* top = new QHBoxLayout;
  top->addWidget(chart_, 1);
  top->addWidget(groups_, 0);
  v->addLayout(top, 3);
  rows_ = NewTable({"line", "model", "device", "group", "measured", "predicted", "error", "speed", "assumed"});
  rows_->setSortingEnabled(true);
  rows_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  rows_->setWordWrap(false);
  // One line a run, a fixed height: ResizeToContents measured every row
  // again at each of the table's 2,600 cells as it filled, a minute of a
  // visible window's time.
  rows_->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  rows_->verticalHeader()->setDefaultSectionSize(rows_->fontMetrics().height() + 4);
  rows_->setToolTip("Click a run to see the estimate behind its prediction below (orrery validate --row)");
  detail_ = new QPlainTextEdit;
  detail_->setObjectName("validationDetail");
  detail_->setReadOnly(true);
  detail_->setLineWrapMode(QPlainTextEdit::NoWrap);
  detail_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  detail_->setPlaceholderText("Click a run above: its prediction in full, as orrery validate --row LINE prints it.");
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(rows_);
  split->addWidget(detail_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  v->addWidget(split, 5);
  connect(group_, &QComboBox::currentIndexChanged, this, &ValidationPanel::Redraw);
  connect(engine_, &QComboBox::currentIndexChanged, this, [this] {
    // The other engine's runs go at once: a chart or table left standing
    // while the new prediction runs would read as this engine's.
    result_.reset();
    busy_ = false;
    summary_->setText(QString("Predicting the measured runs on %1…").arg(engine_->currentText()));
    FreshChart(chart_);
    groups_->setRowCount(0);
    rows_->setRowCount(0);
    ++detail_generation_;
    detail_busy_ = false;
    detail_->clear();
    Refresh();
  });
  connect(rows_, &QTableWidget::itemSelectionChanged, this, [this] {
    const auto picked = rows_->selectedItems();
    if (picked.isEmpty()) return;
    const QTableWidgetItem* line = rows_->item(picked.front()->row(), 0);
    if (line != nullptr) ShowRow(line->data(Qt::UserRole).toInt());
  });
}

int ValidationPanel::runs() const { return result_ ? result_->report.evaluated : 0; }

QString ValidationPanel::detail() const { return detail_->toPlainText(); }

void ValidationPanel::SelectLine(int line) {
  for (int r = 0; r < rows_->rowCount(); ++r) {
    const QTableWidgetItem* item = rows_->item(r, 0);
    if (item != nullptr && item->data(Qt::UserRole).toInt() == line) {
      rows_->selectRow(r);
      rows_->scrollToItem(item, QAbstractItemView::PositionAtCenter);
      return;
    }
  }
}

void ValidationPanel::ShowRow(int line) {
  const int gen = ++detail_generation_;
  detail_busy_ = true;
  detail_->setPlainText(QString("Predicting line %1 again…").arg(line));
  RunAsync<std::string>(
      this,
      [line, engine = Engine()] {
        ValidateRequest req;
        req.line = line;
        const ValidateResult r = Validate(req);
        std::ostringstream text;
        if (r.report.rows.empty()) {
          text << (r.reason.empty() ? "no measured run on that line" : r.reason) << "\n";
        } else {
          const engine::ValidationRow& row = r.report.rows.front();
          text::PrintValidationRow(row, EstimateValidationRow(row, {}, true, engine), {}, text);
        }
        return text.str();
      },
      [this, gen](const std::string& text) {
        if (gen != detail_generation_) return;
        detail_busy_ = false;
        detail_->setPlainText(QString::fromStdString(text));
      });
}

void ValidationPanel::SetGroup(const QString& by) {
  const int i = group_->findData(by);
  if (i >= 0) group_->setCurrentIndex(i);
}

void ValidationPanel::SetEngine(const QString& engine) {
  const int i = engine_->findData(engine);
  if (i >= 0) engine_->setCurrentIndex(i);
}

EstimateEngine ValidationPanel::Engine() const {
  return engine_->currentData().toString() == "event" ? EstimateEngine::kEvent : EstimateEngine::kClosed;
}

void ValidationPanel::Refresh() {
  if (result_ || busy_) {
    Redraw();
    return;
  }
  busy_ = true;
  const int gen = ++result_generation_;
  ValidateRequest req;
  req.engine = Engine();
  RunAsync<std::shared_ptr<const ValidateResult>>(
      this, [req] { return std::make_shared<const ValidateResult>(Validate(req)); },
      [this, gen](const std::shared_ptr<const ValidateResult>& r) {
        if (gen != result_generation_) return;  // the engine changed since
        busy_ = false;
        result_ = r;
        Redraw();
      });
}

void ValidationPanel::Redraw() {
  if (!result_) return;
  const ValidateResult& res = *result_;
  if (!res.diagnostics.ok() || res.report.rows.empty()) {
    summary_->setText("The measured runs could not be read: " +
                      QString::fromStdString(res.reason.empty() ? DefaultValidationCsv() : res.reason));
    return;
  }
  const std::string by = group_->currentData().toString().toStdString();
  const std::map<std::string, engine::ValidationReport> groups = GroupValidationRows(res.report.rows, by);
  const engine::ValidationReport& all = res.report;
  summary_->setText(QString("%1 measured runs predicted%6 (%2 skipped, listed by orrery validate): mean "
                            "absolute error %3 %, bias %4 (the mean of predicted over measured speed, "
                            "less 1: + means the predictions run faster than the measured runs). Source: %5")
                        .arg(all.evaluated)
                        .arg(all.skipped)
                        .arg(all.mape_pct, 0, 'f', 2)
                        .arg(SignedPercent(all.speed_bias_pct, 2))
                        .arg(QString::fromStdString(std::filesystem::path(DefaultValidationCsv()).filename().string()))
                        .arg(res.engine == EstimateEngine::kEvent ? " on the event engine" : ""));

  // One scatter series a group, at x = the group's position (runs spread
  // across it in file order), y = the run's bias; a line at 0.
  QChart* chart = FreshChart(chart_);
  auto* x = new QCategoryAxis;
  x->setLabelsPosition(QCategoryAxis::AxisLabelsPositionCenter);
  // Group names whole under their columns (a100-40gb, mi250x-gcd): the
  // axis elides a label wider than its column.
  QFont small = x->labelsFont();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  x->setLabelsFont(small);
  auto* y = new QValueAxis;
  y->setTitleText("speed bias (%)");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  double lo = 0, hi = 0;
  int i = 0;
  for (const auto& [name, g] : groups) {
    auto* s = new QScatterSeries;
    s->setName(QString::fromStdString(name));
    s->setMarkerSize(7);
    const double n = static_cast<double>(g.rows.size());
    for (size_t k = 0; k < g.rows.size(); ++k) {
      if (!g.rows[k].error_pct) continue;  // skipped: counted in the table, not drawn
      const double b = engine::SpeedBiasPct(g.rows[k]);
      lo = std::min(lo, b);
      hi = std::max(hi, b);
      s->append(i + 0.8 * ((static_cast<double>(k) + 0.5) / n - 0.5), b);
    }
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
    x->append(QString::fromStdString(name.size() > 18 ? name.substr(0, 17) + "…" : name), i + 0.5);
    ++i;
  }
  x->setRange(-0.5, i - 0.5);
  auto* zero = new QLineSeries;
  zero->setName("measured");
  zero->append(-0.5, 0);
  zero->append(i - 0.5, 0);
  chart->addSeries(zero);
  zero->attachAxis(x);
  zero->attachAxis(y);
  const double pad = 0.05 * (hi - lo) + 1;
  y->setRange(lo - pad, hi + pad);
  y->applyNiceNumbers();
  y->setLabelFormat("%+.0f");
  chart->legend()->setVisible(false);  // the axis names the groups; the title says what 0 is

  groups_->setSortingEnabled(false);
  groups_->setRowCount(static_cast<int>(groups.size()));
  int gi = 0;
  for (const auto& [name, g] : groups) {
    int c = 0;
    groups_->setItem(gi, c++, new QTableWidgetItem(QString::fromStdString(name)));
    groups_->setItem(gi, c++, new NumberItem(QString::number(g.evaluated), g.evaluated));
    groups_->setItem(gi, c++, new NumberItem(QString::number(g.mape_pct, 'f', 2) + " %", g.mape_pct));
    groups_->setItem(gi, c++, new NumberItem(SignedPercent(g.speed_bias_pct, 2), g.speed_bias_pct));
    groups_->setItem(gi, c++, new NumberItem(QString::number(g.max_abs_error_pct, 'f', 2) + " %",
                                             g.max_abs_error_pct));
    ++gi;
  }
  groups_->setSortingEnabled(true);
  // As wide as its columns (they size to their contents), so the chart
  // takes the rest of the row.
  groups_->setFixedWidth(groups_->horizontalHeader()->length() + 2 * groups_->frameWidth() +
                         groups_->verticalScrollBar()->sizeHint().width());

  rows_->setSortingEnabled(false);
  rows_->setRowCount(all.evaluated);
  int ri = 0;
  for (const auto& r : all.rows) {
    if (!r.error_pct) continue;
    int c = 0;
    rows_->setItem(ri, c++, new NumberItem(QString::number(r.line), r.line));
    auto* model = new QTableWidgetItem(QString::fromStdString(r.model));
    model->setToolTip(QString::fromStdString(r.source));
    rows_->setItem(ri, c++, model);
    rows_->setItem(ri, c++, new QTableWidgetItem(QString::fromStdString(r.device)));
    rows_->setItem(ri, c++, new QTableWidgetItem(QString::fromStdString(ValidationGroupOf(r, by))));
    rows_->setItem(ri, c++, new NumberItem(MetricText(r.metric, r.measured), r.measured));
    rows_->setItem(ri, c++, new NumberItem(MetricText(r.metric, r.predicted), r.predicted));
    rows_->setItem(ri, c++, new NumberItem(SignedPercent(*r.error_pct), *r.error_pct));
    // The error is the metric's own; the speed leans the same way for
    // every metric (+ = predicted faster), as the chart plots it.
    const double speed = engine::SpeedBiasPct(r);
    auto* speed_item = new NumberItem(SignedPercent(speed), speed);
    speed_item->setToolTip("predicted over measured speed, less 1: + = predicted faster than measured");
    rows_->setItem(ri, c++, speed_item);
    auto* assumed = new QTableWidgetItem(QString::fromStdString(r.assumptions));
    assumed->setToolTip(QString::fromStdString(r.assumptions));
    rows_->setItem(ri, c++, assumed);
    ++ri;
  }
  rows_->setSortingEnabled(true);
  rows_->sortItems(0, Qt::AscendingOrder);
  rows_->resizeColumnsToContents();
  rows_->setColumnWidth(1, std::min(rows_->columnWidth(1), 220));
  rows_->setColumnWidth(8, 600);
}

}  // namespace orrery::gui
