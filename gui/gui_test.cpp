// Qt Test suite of orrery-gui, run offscreen (QT_QPA_PLATFORM=offscreen):
// drives the real widgets and checks what they show against the library.

#include <QChart>
#include <QAbstractAxis>
#include <QChartView>
#include <QComboBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSettings>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QValueAxis>
#include <QtTest/QtTest>
#include <QStatusBar>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "core/api/registry.h"
#include "core/api/text.h"
#include "core/api/validate.h"
#include "core/estimate/training_estimator.h"
#include "core/search/sweep.h"
#include "gui/chart_util.h"
#include "gui/main_window.h"
#include "gui/panels.h"
#include "gui/scenario_form.h"

using namespace orrery;

namespace {

const char* kScenario = ORRERY_TEST_CONFIG_DIR "/scenarios/gpt3-175b-a100.yaml";

// Types into a form field as a user does and leaves it.
void TypeInto(gui::MainWindow& w, const std::string& path, const QString& text) {
  auto* edit = qobject_cast<QLineEdit*>(w.form()->FieldWidget(path));
  QVERIFY2(edit != nullptr, path.c_str());
  edit->setFocus();
  edit->selectAll();
  QTest::keyClicks(edit, text);
  QTest::keyClick(edit, Qt::Key_Return);  // editingFinished
}

engine::Scenario LoadWith(const std::vector<std::string>& sets) {
  base::Diagnostics d;
  const engine::PresetStore store(ORRERY_TEST_CONFIG_DIR);
  auto s = engine::LoadScenarioFile(kScenario, store, d);
  for (const auto& a : sets) engine::ApplyOverride(*s, a, d);
  return *s;
}

}  // namespace

class GuiTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    qputenv("ORRERY_CONFIG_DIR", ORRERY_TEST_CONFIG_DIR);
    QStandardPaths::setTestModeEnabled(true);  // QSettings go to a test location
    QSettings().clear();
  }

  // Set a field: the shown step time is the library's estimate of the
  // scenario with that override.
  void EditedFieldShowsLibraryEstimate() {
    gui::MainWindow w;
    QVERIFY(w.OpenScenario(kScenario));
    w.show();
    TypeInto(w, "workload.global_batch", "128");
    const engine::Scenario s = LoadWith({"workload.global_batch=128"});
    const engine::TrainingEstimator est(s.model, s.system);
    const engine::TrainingEstimate e = est.Run(s.training, s.workload);
    QVERIFY(e.feasible());
    QLabel* step = w.training()->step_label();
    QTRY_COMPARE(step->property("iteration_s").toDouble(), e.iteration_s);
    QCOMPARE(step->text(), gui::Seconds(e.iteration_s));
    // And a second edit moves it again (pp 8 -> 4 doubles the layers per stage).
    TypeInto(w, "training.pp", "4");
    TypeInto(w, "training.tp", "16");
    const engine::Scenario s2 =
        LoadWith({"workload.global_batch=128", "training.pp=4", "training.tp=16"});
    const engine::TrainingEstimator est2(s2.model, s2.system);
    const engine::TrainingEstimate e2 = est2.Run(s2.training, s2.workload);
    QTRY_COMPARE(step->property("iteration_s").toDouble(), e2.iteration_s);
  }

  // A bare number where a unit is needed: the field shows the rule, as
  // `orrery check` states it, and nothing is estimated.
  void BareNumberShowsFieldError() {
    gui::MainWindow w;
    QVERIFY(w.OpenScenario(kScenario));
    w.show();
    TypeInto(w, "system.device.memory_capacity", "80");
    const base::ParamInfo* info = nullptr;
    const auto registry = engine::Registry();
    for (const auto& sec : registry)
      if (sec.prefix == "system.device")
        for (const auto& p : sec.params)
          if (p.key == "memory_capacity") info = &p;
    QVERIFY(info != nullptr);
    base::ParamValue v;
    std::string hint;
    const std::string rule = base::ParseParam(*info, "80", v, hint);
    QVERIFY(!rule.empty());
    const QString expected = QString::fromStdString("system.device.memory_capacity: " + rule +
                                                    " (got '80')" + (hint.empty() ? "" : "; " + hint));
    QLabel* error = w.form()->ErrorLabel("system.device.memory_capacity");
    QVERIFY(error != nullptr);
    QTRY_VERIFY(!error->isHidden());
    QCOMPARE(error->text(), expected);
    QVERIFY(!w.training()->step_label()->property("iteration_s").isValid());
    // A unit fixes it.
    TypeInto(w, "system.device.memory_capacity", "80 GiB");
    QTRY_VERIFY(error->isHidden());
    QTRY_VERIFY(w.training()->step_label()->property("iteration_s").isValid());
  }

  // Saving writes what is shown: the saved file, loaded by the library,
  // estimates to the step time on screen.
  void SavedScenarioReloadsToWhatIsShown() {
    QTemporaryDir dir;
    gui::MainWindow w;
    QVERIFY(w.OpenScenario(kScenario));
    auto* system = w.form()->findChild<QComboBox*>("systemPreset");
    QVERIFY(system != nullptr);
    system->setCurrentText("dgx-a100-superpod");
    emit system->activated(system->currentIndex());
    TypeInto(w, "system.nodes", "8");
    TypeInto(w, "training.micro_batch", "2");
    QTRY_VERIFY(w.training()->step_label()->property("iteration_s").isValid());
    const double shown = w.training()->step_label()->property("iteration_s").toDouble();
    const QString file = dir.filePath("saved.yaml");
    QVERIFY(w.SaveScenario(file));
    base::Diagnostics d;
    auto s = engine::LoadScenarioFile(file.toStdString(), engine::PresetStore(ORRERY_TEST_CONFIG_DIR), d);
    QVERIFY2(s.has_value(), d.ToString().c_str());
    QCOMPARE(s->system.nodes, int64_t{8});
    QCOMPARE(s->training.micro_batch, int64_t{2});
    const engine::TrainingEstimator est(s->model, s->system);
    QCOMPARE(est.Run(s->training, s->workload).iteration_s, shown);
  }

  // A small search; clicking the first row loads that plan into the scenario.
  void SearchRowLoadsPlan() {
    gui::MainWindow w;
    QVERIFY(w.OpenScenario(kScenario));
    w.show();
    w.tabs()->setCurrentWidget(w.search());
    w.search()->SetKeep(5);
    w.search()->Run();
    auto* table = w.search()->MainTable();
    QTRY_VERIFY_WITH_TIMEOUT(!w.search()->running(), 240000);
    QVERIFY(w.search()->outcome().ok);
    QCOMPARE(table->rowCount(), static_cast<int>(w.search()->outcome().rows.size()));
    // The summary in grouped figures, with what did not fit told apart from
    // what broke a pipeline rule.
    const gui::SearchOutcome& o = w.search()->outcome();
    QCOMPARE(o.evaluated, o.feasible + o.out_of_memory + o.refused);
    const QString status = w.search()->status_label()->text();
    QVERIFY2(status.startsWith(gui::Grouped(o.candidates) + " candidates; " + gui::Grouped(o.evaluated) +
                               " evaluated: " + gui::Grouped(o.feasible) + " fit, "),
             qPrintable(status));
    // The step-time axis labels its ticks apart (the plans kept lie within
    // a few percent of each other: "%.3g" had printed one label twice).
    auto* x = qobject_cast<QValueAxis*>(w.search()->MainChart()->chart()->axes(Qt::Horizontal).front());
    QVERIFY(x != nullptr);
    std::set<QString> labels;
    for (int i = 0; i < x->tickCount(); ++i)
      labels.insert(QString::asprintf(x->labelFormat().toLatin1().constData(),
                                      x->min() + (x->max() - x->min()) * i / (x->tickCount() - 1)));
    QCOMPARE(static_cast<int>(labels.size()), x->tickCount());
    QCOMPARE(gui::AxisLabelFormat(11.1, 11.4), QString("%.2f"));
    QCOMPARE(gui::AxisLabelFormat(0, 1000), QString("%.0f"));
    // Computed bytes in decimal units, as the CLI prints them: a KV cache of
    // exactly 5440 MiB had read "5440 MiB" beside "17.24 GB" of weights.
    QCOMPARE(gui::Bytes(5440.0 * 1048576), QString("5.704 GB"));
    QCOMPARE(gui::Seconds(0), QString("0 s"));  // the timeline's first tick had read "0 ns"
    const gui::SearchRow best = w.search()->outcome().rows.front();
    QVERIFY(!best.overrides.empty());  // the scenario's own plan is not the fastest
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {},
                      table->visualItemRect(table->item(0, 1)).center());
    QTRY_VERIFY(w.built().ok());
    const engine::Scenario& s = *w.built().scenario;
    QCOMPARE(s.training.tp, best.tp);
    QCOMPARE(s.training.pp, best.pp);
    QCOMPARE(s.training.micro_batch, best.micro_batch);
    QCOMPARE(engine::DataParallel(s), best.dp);
    // The live estimate follows: the shown step is the searched plan's closed
    // form (the search ranks its finalists by the event engine's time).
    QTRY_COMPARE(w.training()->step_label()->property("iteration_s").toDouble(), best.closed_form_s);
  }

  // A stored sweep reopened: one series per value of the second axis, each
  // point the library's estimate of that point.
  void StoredSweepChart() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const std::string sweep_file = dir.filePath("s.yaml").toStdString();
    {
      std::ofstream out(sweep_file);
      out << "sweep:\n  name: gui-test\n  scenario: " << kScenario
          << "\n  each: estimate\n  axes:\n"
             "    - path: system.network[1].bandwidth\n      values: [100 Gb/s, 200 Gb/s, 400 Gb/s]\n"
             "    - path: system.device.memory_capacity\n      values: [80 GB, 96 GB]\n";
    }
    base::Diagnostics d;
    engine::Scenario base;
    const engine::PresetStore store(ORRERY_TEST_CONFIG_DIR);
    auto spec = engine::LoadSweepFile(sweep_file, store, base, d);
    QVERIFY2(spec.has_value(), d.ToString().c_str());
    const std::string db = dir.filePath("r.sqlite").toStdString();
    engine::SweepRunOptions o;
    o.db = db;
    o.threads = 1;
    engine::SweepRunStats stats;
    std::string error;
    QVERIFY2(engine::RunSweep(*spec, base, o, stats, error), error.c_str());

    gui::MainWindow w;
    QVERIFY(w.OpenScenario(kScenario));
    QVERIFY(w.sweep()->OpenStore(QString::fromStdString(db)));
    QChart* chart = w.sweep()->MainChart()->chart();
    const auto series = chart->series();
    QCOMPARE(series.size(), 2);  // memory 80 GB and 96 GB
    const auto points = engine::ExpandPoints(*spec);
    QCOMPARE(points.size(), size_t{6});
    // The chart draws bandwidth in GB/s: 400 Gb/s is 50 GB/s.
    const gui::DisplayUnit unit = gui::UnitFor("system.network[1].bandwidth", 50e9);
    QCOMPARE(unit.unit, std::string("GB/s"));
    QCOMPARE(chart->axes(Qt::Horizontal).front()->titleText(),
             QString("system.network[1].bandwidth (GB/s)"));
    for (const auto& p : points) {
      const engine::PointResult r = engine::EvaluatePoint(base, *spec, p);
      QCOMPARE(QString::fromStdString(r.status), QString("ok"));
      const QString name = QString::fromStdString(p.params[1].first + " = " + p.params[1].second);
      QLineSeries* line = nullptr;
      for (auto* s : series)
        if (s->name() == name) line = qobject_cast<QLineSeries*>(s);
      QVERIFY2(line != nullptr, qPrintable(name));
      const double x = gui::NumericValue(p.params[0].first, p.params[0].second) / unit.divide;
      bool found = false;
      for (const QPointF& pt : line->points())
        if (pt.x() == x) {
          QCOMPARE(pt.y(), r.iteration_s);
          found = true;
        }
      QVERIFY2(found, qPrintable(QString::fromStdString(p.params[0].second)));
    }
    QCOMPARE(w.sweep()->MainTable()->rowCount(), 6);

    // The same points as a heatmap: one square per point at (bandwidth in
    // GB/s, memory in GB): 100, 200, 400 Gb/s = 12.5, 25, 50 GB/s by 80, 96 GB;
    // the slowest step in viridis' last colour, the fastest in its first.
    w.sweep()->SetHeatmap(true);
    QChart* heat = w.sweep()->MainChart()->chart();
    QCOMPARE(heat->series().size(), 6);
    double slow = 0, fast = std::numeric_limits<double>::infinity();
    for (const auto& p : points) {
      const double t = engine::EvaluatePoint(base, *spec, p).iteration_s;
      slow = std::max(slow, t);
      fast = std::min(fast, t);
    }
    std::set<std::pair<double, double>> cells;
    int slowest = 0, fastest = 0;
    for (auto* s : heat->series()) {
      auto* sq = qobject_cast<QScatterSeries*>(s);
      QVERIFY(sq != nullptr);
      QCOMPARE(sq->count(), 1);
      cells.insert({sq->at(0).x(), sq->at(0).y()});
      if (sq->name() == QString("step time (s) = %1").arg(slow, 0, 'g', 4)) {
        QCOMPARE(sq->color(), QColor(253, 231, 37));
        ++slowest;
      }
      if (sq->name() == QString("step time (s) = %1").arg(fast, 0, 'g', 4)) {
        QCOMPARE(sq->color(), QColor(68, 1, 84));
        ++fastest;
      }
    }
    const std::set<std::pair<double, double>> grid = {{12.5, 80}, {25, 80}, {50, 80},
                                                      {12.5, 96}, {25, 96}, {50, 96}};
    QCOMPARE(cells, grid);
    QVERIFY(slowest >= 1);
    QVERIFY(fastest >= 1);
  }

  // A sweep stopped right after it starts keeps what it stored (fewer points
  // than the grid's 6 x 3 = 18) and says so; Run again resumes to all 18.
  void SweepStopsAndResumes() {
    QTemporaryDir dir;
    gui::MainWindow w;
    QVERIFY(w.OpenScenario(kScenario));
    w.tabs()->setCurrentWidget(w.sweep());
    w.sweep()->SetStorePath(dir.filePath("stop.sqlite"));
    w.sweep()->EnableSecondAxis(true);  // defaults: 6 bandwidths x 3 memory sizes
    w.sweep()->Run();
    QVERIFY(w.sweep()->running());
    w.sweep()->Cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!w.sweep()->running(), 120000);
    QVERIFY(w.sweep()->data().ok);
    QCOMPARE(w.sweep()->data().points, uint64_t{18});
    QVERIFY(w.sweep()->data().rows.size() < 18);
    w.sweep()->Run();
    QTRY_VERIFY_WITH_TIMEOUT(!w.sweep()->running(), 120000);
    QCOMPARE(w.sweep()->data().rows.size(), size_t{18});
  }

  // A Hugging Face config.json as the model: the form shows it, the saved
  // scenario names it and reloads to its shape (Llama 3.1 8B: 32 layers,
  // hidden 4096, 32 heads, 8 KV heads, tests/data/hf); a broken one is refused.
  void ModelConfigBecomesTheModel() {
    QTemporaryDir dir;
    gui::MainWindow w;
    QVERIFY(w.OpenScenario(kScenario));
    const QString config = ORRERY_TEST_SOURCE_DIR "/tests/data/hf/llama-3.1-8b.config.json";
    QVERIFY(w.OpenModelConfig(config));
    QVERIFY(w.built().scenario.has_value());
    const engine::Scenario& s = *w.built().scenario;
    QCOMPARE(s.model.layers, int64_t{32});
    QCOMPARE(s.model.hidden, int64_t{4096});
    QCOMPARE(s.model.heads, int64_t{32});
    auto* model = w.form()->findChild<QComboBox*>("modelPreset");
    QVERIFY(model != nullptr);
    QCOMPARE(model->currentText(), QString("config: llama-3.1-8b.config.json"));
    const QString file = dir.filePath("hf.yaml");
    QVERIFY(w.SaveScenario(file));
    base::Diagnostics d;
    const auto saved = ResolveScenario(ScenarioInput::File(file.toStdString()), d);
    QVERIFY2(saved.has_value(), d.ToString().c_str());
    QCOMPARE(saved->model.layers, int64_t{32});
    QCOMPARE(saved->model.kv_heads, int64_t{8});

    QVERIFY(!w.OpenModelConfig(ORRERY_TEST_SOURCE_DIR "/tests/data/hf/broken.config.json"));
    QVERIFY(!w.built().errors.empty());
    auto* banner = w.form()->findChild<QLabel*>("scenarioErrors");
    QVERIFY(banner != nullptr && !banner->isHidden());
    QVERIFY(banner->text().contains("broken.config.json"));
  }

  // Axis ticks at 1, 2 or 5 times a power of ten, about five to a range.
  void NiceTicksAreRoundSteps() {
    QCOMPARE(gui::NiceTickStep(17.7), 5.0);   // a 17.7 s step: 0, 5, 10, 15
    QCOMPARE(gui::NiceTickStep(81.6), 20.0);  // an 80 GB device: 0, 20 ... 80
    QCOMPARE(gui::NiceTickStep(22.4), 5.0);   // 22.4 req/s
    QCOMPARE(gui::NiceTickStep(1000), 200.0);
    QCOMPARE(gui::NiceTickStep(0.9), 0.2);
    QCOMPARE(gui::NiceTickStep(0), 0.0);
    QCOMPARE(gui::NiceTickStep(-3), 0.0);
    QValueAxis axis;
    axis.setRange(0, 22.4);
    gui::RoundTicks(&axis);
    QCOMPARE(axis.tickType(), QValueAxis::TicksDynamic);
    QCOMPARE(axis.tickInterval(), 5.0);
    QCOMPARE(axis.max(), 22.4);  // the range stays as it was
    QCOMPARE(axis.labelFormat(), QString("%.0f"));
    axis.setRange(0, 0.9);
    gui::RoundTicks(&axis);
    QCOMPARE(axis.labelFormat(), QString("%.1f"));
  }

  // A signed cell always shows its sign, so a column of errors reads for
  // direction at a glance.
  void SignedPercentShowsItsSign() {
    QCOMPARE(gui::SignedPercent(12.345), QString("+12.3 %"));
    QCOMPARE(gui::SignedPercent(-4, 2), QString("-4.00 %"));
    QCOMPARE(gui::SignedPercent(0), QString("+0.0 %"));
  }

  // The Validation tab: the library's validation of the measured runs,
  // grouped as chosen. Korthikanti et al. 2022 Table 5 alone has selective
  // recompute rows (4 of its 8); every evaluated run is one point of the
  // chart and counted once in the groups.
  void ValidationTabGroupsTheMeasuredRuns() {
    qputenv("ORRERY_VALIDATION_DIR", ORRERY_TEST_SOURCE_DIR "/validation");
    gui::MainWindow w;
    QVERIFY(w.OpenScenario(kScenario));
    w.tabs()->setCurrentWidget(w.validation());
    QTRY_VERIFY_WITH_TIMEOUT(w.validation()->runs() > 0, 120000);
    ValidateRequest req;
    req.by = "recompute";
    const ValidateResult lib = Validate(req);
    QCOMPARE(w.validation()->runs(), lib.report.evaluated);
    w.validation()->SetGroup("recompute");
    QTableWidget* g = w.validation()->groups();
    QCOMPARE(g->rowCount(), static_cast<int>(lib.by_facet.size()));
    int runs = 0;
    bool selective = false;
    for (int r = 0; r < g->rowCount(); ++r) {
      const std::string name = g->item(r, 0)->text().toStdString();
      const int n = g->item(r, 1)->text().toInt();
      runs += n;
      QVERIFY2(lib.by_facet.count(name) == 1, name.c_str());
      QCOMPARE(n, lib.by_facet.at(name).evaluated);
      QCOMPARE(g->item(r, 2)->text(), QString::number(lib.by_facet.at(name).mape_pct, 'f', 2) + " %");
      if (name == "selective") {
        selective = true;
        QCOMPARE(n, 4);
      }
    }
    QVERIFY(selective);
    QCOMPARE(runs, lib.report.evaluated);
    // By device (ten groups) on a 1500 x 900 window, as the screenshot
    // shows it: the groups table beside the chart holds every group's row
    // and every column in view, without scrolling.
    w.resize(1500, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.validation()->SetGroup("device");
    QVERIFY(g->rowCount() >= 10);
    QCoreApplication::processEvents();
    QVERIFY(g->visualRect(g->model()->index(g->rowCount() - 1, 0)).bottom() < g->viewport()->height());
    QVERIFY(g->horizontalHeader()->length() <= g->viewport()->width());
    int points = 0;
    for (auto* series : w.validation()->MainChart()->chart()->series())
      if (auto* scatter = qobject_cast<QScatterSeries*>(series)) points += static_cast<int>(scatter->count());
    QCOMPARE(points, lib.report.evaluated);
    // The runs table: each run's speed error (column 7) leans as the chart
    // plots it, + = predicted faster; for a time it has the error's other
    // sign (line 2: a step time).
    QTableWidget* rows = w.validation()->MainTable();
    QCOMPARE(rows->horizontalHeaderItem(7)->text(), QString("speed"));
    for (const auto& run : lib.report.rows)
      if (run.line == 2 && run.error_pct) {
        const double speed = engine::SpeedBiasPct(run);
        QVERIFY((speed > 0) == (*run.error_pct < 0));
        bool shown = false;
        for (int r = 0; r < rows->rowCount(); ++r)
          if (rows->item(r, 0)->text() == "2") {
            shown = true;
            QCOMPARE(rows->item(r, 7)->text(), (speed >= 0 ? "+" : "") + QString::number(speed, 'f', 1) + " %");
          }
        QVERIFY(shown);
      }

    // A click on a run shows it as `orrery validate --row` prints it.
    w.validation()->SelectLine(2);
    QTRY_VERIFY_WITH_TIMEOUT(!w.validation()->detail_busy(), 60000);
    ValidateRequest one;
    one.line = 2;
    const ValidateResult row = Validate(one);
    QCOMPARE(row.report.rows.size(), size_t{1});
    std::ostringstream expected;
    text::PrintValidationRow(row.report.rows.front(), EstimateValidationRow(row.report.rows.front(), {}, true), {},
                             expected);
    QCOMPARE(w.validation()->detail(), QString::fromStdString(expected.str()));
    QVERIFY(w.validation()->detail().contains("Megatron-22B"));

    // Predicted with the event engine: the library's figures on it (a run
    // the event engine does not run is counted as skipped), and a clicked
    // run shows both engines' predictions.
    ValidateRequest on_event;
    on_event.engine = EstimateEngine::kEvent;
    const ValidateResult ev = Validate(on_event);
    QVERIFY(ev.report.evaluated > 0 && ev.report.evaluated < lib.report.evaluated);
    w.validation()->SetEngine("event");
    // Until the event engine's runs arrive, none of the closed form's stay.
    QCOMPARE(w.validation()->MainTable()->rowCount(), 0);
    QVERIFY(w.validation()->MainChart()->chart()->series().isEmpty());
    QVERIFY(w.validation()->detail().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(w.validation()->runs() == ev.report.evaluated, 120000);
    QCOMPARE(w.validation()->MainTable()->rowCount(), ev.report.evaluated);
    w.validation()->ShowRow(2);
    QTRY_VERIFY_WITH_TIMEOUT(!w.validation()->detail_busy() && w.validation()->detail().contains("with the event engine"),
                             60000);
  }

  // File > Export report: the capacity-planning document of the scenario as
  // shown, with the scenario saved beside it and named in its command.
  void ExportsReport() {
    QTemporaryDir dir;
    gui::MainWindow w;
    QVERIFY(w.OpenScenario(kScenario));
    TypeInto(w, "training.micro_batch", "2");
    QTRY_VERIFY(w.training()->step_label()->property("iteration_s").isValid());
    const QString html = dir.filePath("plan.html");
    w.ExportReport(html, false);
    QVERIFY(w.exporting());
    QTRY_VERIFY_WITH_TIMEOUT(!w.exporting(), 240000);
    QFile f(html);
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(w.statusBar()->currentMessage()));
    const QString text = QString::fromUtf8(f.readAll());
    QVERIFY(text.contains("<html"));
    QVERIFY(text.contains(QString::fromStdString(w.built().scenario->model.name)));  // "GPT-3 175B"
    QVERIFY(text.contains("orrery report plan.scenario.yaml --out plan.html"));
    base::Diagnostics d;
    const auto saved = ResolveScenario(ScenarioInput::File(dir.filePath("plan.scenario.yaml").toStdString()), d);
    QVERIFY2(saved.has_value(), d.ToString().c_str());
    QCOMPARE(saved->training.micro_batch, int64_t{2});
  }
};

QTEST_MAIN(GuiTest)
#include "gui_test.moc"
