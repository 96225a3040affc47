#pragma once
// The result panels of the main window, one per tab: training (live),
// timeline, search, sweep, inference and network. Each draws what the
// backend returns; long work runs on a worker thread (QtConcurrent) and comes
// back as a queued call, so the UI thread never waits on the library.

#include <QFutureWatcher>
#include <QPointer>
#include <QWidget>
#include <QtConcurrent/QtConcurrentRun>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>

#include "core/api/validate.h"
#include "gui/backend.h"

class QChart;
class QCheckBox;
class QChartView;
class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace orrery::gui {

class TimelineView;

// Runs `work` on the thread pool and `done(result)` on `ctx`'s thread, unless
// `ctx` is gone by then.
template <class T, class Work, class Done>
void RunAsync(QObject* ctx, Work work, Done done) {
  auto* watcher = new QFutureWatcher<T>(ctx);
  QObject::connect(watcher, &QFutureWatcher<T>::finished, ctx, [watcher, done] {
    done(watcher->result());
    watcher->deleteLater();
  });
  watcher->setFuture(QtConcurrent::run(std::move(work)));
}

// The scenario as edited now; empty while the form has errors.
using ScenarioSource = std::function<std::optional<engine::Scenario>()>;

// Anything with a chart or a table to export.
class ExportablePanel : public QWidget {
  Q_OBJECT
 public:
  using QWidget::QWidget;
  virtual QChartView* MainChart() const { return nullptr; }
  virtual QTableWidget* MainTable() const { return nullptr; }
  virtual QString ExportName() const = 0;
};

class TrainingPanel : public ExportablePanel {
  Q_OBJECT
 public:
  explicit TrainingPanel(QWidget* parent = nullptr);
  void SetResult(const TrainingResult& r);
  void SetInvalid(const QString& why);
  void TogglePin();
  bool pinned() const { return pinned_.has_value(); }
  QChartView* MainChart() const override { return time_chart_; }
  QTableWidget* MainTable() const override { return metrics_; }
  QString ExportName() const override { return "training"; }
  QLabel* step_label() const { return step_; }

 private:
  void Redraw();
  std::optional<TrainingResult> current_, pinned_;
  QLabel* step_ = nullptr;
  QLabel* reason_ = nullptr;
  QLabel* pinned_label_ = nullptr;
  QPushButton* pin_ = nullptr;
  QTableWidget* metrics_ = nullptr;
  QChartView* time_chart_ = nullptr;
  QChartView* memory_chart_ = nullptr;
};

class TimelinePanel : public ExportablePanel {
  Q_OBJECT
 public:
  TimelinePanel(ScenarioSource source, QWidget* parent = nullptr);
  void Refresh();  // re-simulates the current scenario (asynchronously)
  void ExportTrace();
  bool busy() const { return busy_; }
  QString ExportName() const override { return "timeline"; }
  TimelineView* view() const { return view_; }

 private:
  ScenarioSource source_;
  TimelineView* view_ = nullptr;
  QLabel* info_ = nullptr;
  int generation_ = 0;
  bool busy_ = false;
};

class SearchPanel : public ExportablePanel {
  Q_OBJECT
 public:
  SearchPanel(ScenarioSource source, QWidget* parent = nullptr);
  void Run();
  void Cancel();
  bool running() const { return running_; }
  void SetKeep(int n);
  QChartView* MainChart() const override { return scatter_; }
  QTableWidget* MainTable() const override { return table_; }
  QString ExportName() const override { return "search"; }
  const SearchOutcome& outcome() const { return outcome_; }
  const QLabel* status_label() const { return status_; }

 signals:
  void PlanChosen(const std::vector<std::pair<std::string, std::string>>& overrides,
                  const QString& plan);

 private:
  void Show(const SearchOutcome& o);
  ScenarioSource source_;
  QComboBox* objective_ = nullptr;
  QSpinBox* keep_ = nullptr;
  QPushButton* run_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QTableWidget* table_ = nullptr;
  QChartView* scatter_ = nullptr;
  SearchOutcome outcome_;
  std::shared_ptr<std::atomic<bool>> cancel_flag_;
  bool running_ = false;
};

class SweepPanel : public ExportablePanel {
  Q_OBJECT
 public:
  SweepPanel(const ScenarioDoc* doc, ScenarioSource source, QWidget* parent = nullptr);
  void Run();
  // Stops a running sweep after the batch being stored; the points stored
  // stay, and running the same sweep again resumes it.
  void Cancel();
  // Shows the newest sweep of a store; false (with the reason shown) when unreadable.
  bool OpenStore(const QString& db);
  void SetStorePath(const QString& db);
  // Offers the scenario's numeric registry keys as axes.
  void FillKeys();
  bool running() const { return running_; }
  QChartView* MainChart() const override { return chart_; }
  QTableWidget* MainTable() const override { return table_; }
  QString ExportName() const override { return "sweep"; }
  const SweepData& data() const { return data_; }
  // Draws the stored points as lines (one per value of axis 2) or, with two
  // numeric axes, as a heatmap of the metric over both.
  void SetHeatmap(bool on);
  // Sweeps axis 2 too (the grid is axis 1 x axis 2).
  void EnableSecondAxis(bool on);

 signals:
  void StoreOpened(const QString& db);

 private:
  struct AxisInputs {
    QCheckBox* on = nullptr;
    QComboBox* path = nullptr;
    QLineEdit* from = nullptr;
    QLineEdit* to = nullptr;
    QSpinBox* points = nullptr;
    QCheckBox* log = nullptr;
  };
  void Redraw();
  void DrawHeatmap(QChart* chart, int metric);
  void Reload();
  const ScenarioDoc* doc_;
  ScenarioSource source_;
  AxisInputs axes_[2];
  QComboBox* each_ = nullptr;
  QLineEdit* db_ = nullptr;
  QComboBox* metric_ = nullptr;
  QComboBox* view_ = nullptr;
  QPushButton* run_ = nullptr;
  QPushButton* stop_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QChartView* chart_ = nullptr;
  QTableWidget* table_ = nullptr;
  std::shared_ptr<std::atomic<bool>> cancel_flag_;
  SweepData data_;
  QString shown_db_;
  bool running_ = false;
};

class InferencePanel : public ExportablePanel {
  Q_OBJECT
 public:
  InferencePanel(ScenarioSource source, QWidget* parent = nullptr);
  void Refresh();
  bool busy() const { return busy_; }
  QChartView* MainChart() const override { return chart_; }
  QString ExportName() const override { return "inference"; }

 private:
  void Show(const InferenceOutcome& o);
  ScenarioSource source_;
  QLabel* summary_ = nullptr;
  QChartView* chart_ = nullptr;
  int generation_ = 0;
  bool busy_ = false;
  std::shared_ptr<std::atomic<bool>> cancel_flag_;
};

class NetworkDiagram;

class NetworkPanel : public ExportablePanel {
  Q_OBJECT
 public:
  NetworkPanel(ScenarioSource source, QWidget* parent = nullptr);
  void Refresh();
  QChartView* MainChart() const override { return compare_; }
  QTableWidget* MainTable() const override { return parts_; }
  QString ExportName() const override { return "network"; }

 private:
  ScenarioSource source_;
  NetworkDiagram* diagram_ = nullptr;
  QTableWidget* parts_ = nullptr;
  QLabel* totals_ = nullptr;
  QComboBox* other_ = nullptr;
  QLabel* note_ = nullptr;
  QChartView* compare_ = nullptr;
};

// How far to trust a prediction: every measured run of
// validation/training_runs.csv predicted as `orrery validate` does
// (orrery::Validate), each run's predicted over measured speed drawn by
// group (source, device, framework, precision or recompute mode), the
// groups' MAPE and bias, and the runs with their assumptions.
class ValidationPanel : public ExportablePanel {
  Q_OBJECT
 public:
  explicit ValidationPanel(QWidget* parent = nullptr);
  // Predicts the runs the first time (about two seconds, off the GUI
  // thread); later calls only redraw.
  void Refresh();
  bool busy() const { return busy_; }
  int runs() const;  // evaluated runs shown, 0 before the first result
  // Groups by "source", "device", "framework", "precision" or "recompute".
  void SetGroup(const QString& by);
  // "closed" (the default) or "event": which engine predicts the runs
  // (orrery validate --engine); a change predicts them again.
  void SetEngine(const QString& engine);
  QTableWidget* groups() const { return groups_; }
  // Shows one run in full below the table, as `orrery validate --row LINE`
  // prints it (the estimate behind its prediction); what a click on a row
  // of the runs table does.
  void ShowRow(int line);
  // Selects the run on `line` in the table (and so shows it, as a click does).
  void SelectLine(int line);
  QString detail() const;  // the text shown for the last run asked for
  bool detail_busy() const { return detail_busy_; }
  QChartView* MainChart() const override { return chart_; }
  QTableWidget* MainTable() const override { return rows_; }
  QString ExportName() const override { return "validation"; }

 private:
  void Redraw();
  EstimateEngine Engine() const;
  QComboBox* group_ = nullptr;
  QComboBox* engine_ = nullptr;
  QLabel* summary_ = nullptr;
  QChartView* chart_ = nullptr;
  QTableWidget* groups_ = nullptr;
  QTableWidget* rows_ = nullptr;
  QPlainTextEdit* detail_ = nullptr;
  std::shared_ptr<const ValidateResult> result_;
  bool busy_ = false;
  bool detail_busy_ = false;
  int detail_generation_ = 0;
  int result_generation_ = 0;  // the prediction asked for last; older ones are dropped
};

}  // namespace orrery::gui
