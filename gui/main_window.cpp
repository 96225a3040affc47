#include "gui/main_window.h"

#include <QAction>
#include <QChartView>
#include <QApplication>
#include <QCloseEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableWidget>

#include "gui/chart_util.h"
#include "gui/panels.h"
#include "gui/scenario_form.h"

namespace orrery::gui {

namespace {
constexpr int kMaxRecent = 8;
}

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName("orreryMainWindow");
  ScenarioSource source = [this]() -> std::optional<engine::Scenario> {
    if (!built_.ok()) return std::nullopt;
    return built_.scenario;
  };
  form_ = new ScenarioForm(&doc_);
  tabs_ = new QTabWidget;
  tabs_->setObjectName("resultTabs");
  training_ = new TrainingPanel;
  timeline_ = new TimelinePanel(source);
  search_ = new SearchPanel(source);
  sweep_ = new SweepPanel(&doc_, source);
  inference_ = new InferencePanel(source);
  network_ = new NetworkPanel(source);
  validation_ = new ValidationPanel;
  tabs_->addTab(training_, "Training");
  tabs_->addTab(timeline_, "Timeline");
  tabs_->addTab(search_, "Search");
  tabs_->addTab(sweep_, "Sweep");
  tabs_->addTab(inference_, "Inference");
  tabs_->addTab(network_, "Network");
  tabs_->addTab(validation_, "Validation");
  stale_.assign(static_cast<size_t>(tabs_->count()), true);
  auto* split = new QSplitter(Qt::Horizontal);
  split->setObjectName("mainSplitter");
  split->addWidget(form_);
  split->addWidget(tabs_);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  setCentralWidget(split);

  connect(form_, &ScenarioForm::Edited, this, [this] {
    dirty_ = true;
    Rebuild();
  });
  connect(form_, &ScenarioForm::OpenPreset, this, [this](const QString& p) { OpenScenario(p); });
  connect(tabs_, &QTabWidget::currentChanged, this, [this] { RefreshVisibleTab(); });
  connect(search_, &SearchPanel::PlanChosen, this,
          [this](const std::vector<std::pair<std::string, std::string>>& overrides, const QString& plan) {
            for (const auto& [path, text] : overrides) doc_.Set(path, text);
            dirty_ = true;
            statusBar()->showMessage("Loaded plan " + plan, 5000);
            Rebuild();
          });
  connect(sweep_, &SweepPanel::StoreOpened, this, [this](const QString& db) { AddRecent(db); });

  // Menus and shortcuts.
  QMenu* file = menuBar()->addMenu("&File");
  file->addAction("&Open scenario…", QKeySequence::Open, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, "Open scenario",
                                                   QString::fromStdString(PresetsDir() + "/scenarios"),
                                                   "Scenario YAML (*.yaml *.yml);;All files (*)");
    if (!f.isEmpty()) OpenScenario(f);
  });
  file->addAction("Open &model config.json…", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_M), this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, "Open a Hugging Face model config", QString(),
                                                   "Model config (*.json);;All files (*)");
    if (!f.isEmpty()) OpenModelConfig(f);
  });
  recent_menu_ = file->addMenu("Open &recent");
  file->addAction("&Save", QKeySequence::Save, this, [this] {
    if (file_.isEmpty() || file_.startsWith(QString::fromStdString(PresetsDir()))) {
      const QString f = QFileDialog::getSaveFileName(this, "Save scenario", "scenario.yaml", "YAML (*.yaml)");
      if (!f.isEmpty()) SaveScenario(f);
    } else {
      SaveScenario(file_);
    }
  });
  file->addAction("Save &as…", QKeySequence::SaveAs, this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, "Save scenario as", file_, "YAML (*.yaml)");
    if (!f.isEmpty()) SaveScenario(f);
  });
  file->addSeparator();
  file->addAction("Open result &store…", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, "Open result store", QString(),
                                                   "SQLite (*.sqlite *.db);;All files (*)");
    if (!f.isEmpty() && sweep_->OpenStore(f)) tabs_->setCurrentWidget(sweep_);
  });
  file->addAction("Export &chart…", QKeySequence(Qt::CTRL | Qt::Key_E), this, [this] {
    auto* p = qobject_cast<ExportablePanel*>(tabs_->currentWidget());
    if (p != nullptr && p->MainChart() != nullptr) ExportChartDialog(this, p->MainChart(), p->ExportName());
  });
  file->addAction("Export &table (CSV)…", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E), this, [this] {
    auto* p = qobject_cast<ExportablePanel*>(tabs_->currentWidget());
    if (p != nullptr && p->MainTable() != nullptr) ExportCsvDialog(this, p->MainTable()->model(), p->ExportName());
  });
  file->addAction("Export t&race…", QKeySequence(Qt::CTRL | Qt::Key_T), timeline_, &TimelinePanel::ExportTrace);
  file->addAction("Export re&port (HTML)…", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R), this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, "Export capacity-planning report", "report.html",
                                                   "HTML (*.html)");
    if (f.isEmpty()) return;
    const auto search = QMessageBox::question(
        this, "Export report", "Search for the best plans for the report?\n\n"
                               "Yes: rank plans (a search, seconds to minutes). No: report the scenario's own plan.");
    ExportReport(f, search == QMessageBox::Yes);
  });
  file->addSeparator();
  file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);
  QMenu* run = menuBar()->addMenu("&Run");
  run->addAction("&Search plans", QKeySequence(Qt::CTRL | Qt::Key_R), this, [this] {
    tabs_->setCurrentWidget(search_);
    search_->Run();
  });
  run->addAction("&Cancel search", QKeySequence(Qt::Key_Escape), search_, &SearchPanel::Cancel);
  run->addAction("&Pin / unpin for compare", QKeySequence(Qt::CTRL | Qt::Key_P), training_,
                 &TrainingPanel::TogglePin);
  QMenu* view = menuBar()->addMenu("&View");
  for (int i = 0; i < tabs_->count(); ++i)
    view->addAction(tabs_->tabText(i), QKeySequence(Qt::CTRL | (Qt::Key_1 + i)), this,
                    [this, i] { tabs_->setCurrentIndex(i); });

  // Window state and recent files.
  QSettings settings;
  restoreGeometry(settings.value("window/geometry").toByteArray());
  if (!split->restoreState(settings.value("window/splitter").toByteArray())) split->setSizes({480, 1020});
  tabs_->setCurrentIndex(settings.value("window/tab", 0).toInt());
  if (!settings.contains("window/geometry")) resize(1400, 860);
  UpdateRecentMenu();
  UpdateTitle();
}

MainWindow::~MainWindow() = default;

void MainWindow::closeEvent(QCloseEvent* e) {
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  if (auto* split = findChild<QSplitter*>("mainSplitter")) settings.setValue("window/splitter", split->saveState());
  settings.setValue("window/tab", tabs_->currentIndex());
  e->accept();
}

void MainWindow::changeEvent(QEvent* e) {
  // The system switched between light and dark: charts follow.
  if (e->type() == QEvent::PaletteChange || e->type() == QEvent::ApplicationPaletteChange)
    for (QChartView* v : findChildren<QChartView*>()) StyleChart(v->chart());
  QMainWindow::changeEvent(e);
}

bool MainWindow::OpenScenario(const QString& file_or_preset) {
  base::Diagnostics d;
  ScenarioDoc next;
  if (!next.Open(file_or_preset.toStdString(), d)) {
    QMessageBox::warning(this, "Open scenario", QString::fromStdString(d.ToString()).trimmed());
    return false;
  }
  doc_ = std::move(next);
  file_ = QString::fromStdString(doc_.file());
  dirty_ = false;
  AddRecent(file_);
  Rebuild();
  return true;
}

bool MainWindow::OpenModelConfig(const QString& file) {
  doc_.SetModelPreset(file.toStdString());
  dirty_ = true;
  Rebuild();
  if (!built_.errors.empty()) {
    statusBar()->showMessage("Cannot use " + file + " as the model (see the error above the form)", 8000);
    return false;
  }
  statusBar()->showMessage("Model from " + file, 5000);
  return true;
}

void MainWindow::ExportReport(const QString& html, bool search) {
  if (exporting_) return;
  exporting_ = true;
  statusBar()->showMessage(search ? "Writing the report (searching plans)…" : "Writing the report…");
  RunAsync<std::string>(
      this, [doc = doc_, search, file = html.toStdString()] { return WriteReport(doc, search, file); },
      [this, html](const std::string& error) {
        exporting_ = false;
        if (error.empty()) statusBar()->showMessage("Wrote " + html, 8000);
        else statusBar()->showMessage("Report not written: " + QString::fromStdString(error));
      });
}

void MainWindow::SetOverride(const std::string& path, const std::string& text) {
  doc_.Set(path, text);
  dirty_ = true;
  Rebuild();
}

bool MainWindow::SaveScenario(const QString& file) {
  std::string error;
  if (!doc_.Save(file.toStdString(), error)) {
    QMessageBox::warning(this, "Save scenario", QString::fromStdString(error));
    return false;
  }
  file_ = file;
  dirty_ = false;
  AddRecent(file);
  statusBar()->showMessage("Saved " + file, 4000);
  UpdateTitle();
  return true;
}

void MainWindow::Rebuild() {
  built_ = doc_.Build();
  form_->Show(built_);
  std::fill(stale_.begin(), stale_.end(), true);
  UpdateTitle();
  if (!built_.ok()) {
    const size_t n = built_.field_errors.size() + built_.errors.size();
    training_->SetInvalid(QString("Not estimated: %1 error%2 in the scenario (shown in red at the fields).")
                              .arg(n)
                              .arg(n == 1 ? "" : "s"));
    statusBar()->showMessage(QString("%1 error(s)").arg(n));
    return;
  }
  statusBar()->clearMessage();
  // The closed form takes microseconds, but it still runs off the UI thread;
  // only the newest edit's result is shown.
  const int gen = ++generation_;
  RunAsync<TrainingResult>(this, [s = *built_.scenario] { return EstimateTraining(s); },
                           [this, gen](const TrainingResult& r) {
                             if (gen != generation_) return;
                             if (!r.invalid.empty()) training_->SetInvalid(QString::fromStdString(r.invalid));
                             else training_->SetResult(r);
                           });
  stale_[0] = false;
  RefreshVisibleTab();
}

void MainWindow::RefreshVisibleTab() {
  const int i = tabs_->currentIndex();
  // The measured runs do not depend on the scenario being edited.
  if (tabs_->widget(i) == validation_) {
    validation_->Refresh();
    return;
  }
  if (i < 0 || !stale_[static_cast<size_t>(i)] || !built_.ok()) return;
  stale_[static_cast<size_t>(i)] = false;
  QWidget* w = tabs_->widget(i);
  if (w == timeline_) timeline_->Refresh();
  else if (w == inference_) inference_->Refresh();
  else if (w == network_) network_->Refresh();
  else if (w == sweep_) sweep_->FillKeys();
}

void MainWindow::AddRecent(const QString& file) {
  QSettings settings;
  QStringList recent = settings.value("recentFiles").toStringList();
  const QString abs = QFileInfo(file).absoluteFilePath();
  recent.removeAll(abs);
  recent.prepend(abs);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue("recentFiles", recent);
  UpdateRecentMenu();
}

void MainWindow::UpdateRecentMenu() {
  recent_menu_->clear();
  const QStringList recent = QSettings().value("recentFiles").toStringList();
  for (const QString& f : recent) {
    recent_menu_->addAction(f, this, [this, f] {
      if (f.endsWith(".sqlite") || f.endsWith(".db")) {
        if (sweep_->OpenStore(f)) tabs_->setCurrentWidget(sweep_);
      } else {
        OpenScenario(f);
      }
    });
  }
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::UpdateTitle() {
  QString name = file_.isEmpty() ? "no scenario" : QFileInfo(file_).fileName();
  const size_t n = doc_.overrides().size();
  if (n > 0) name += QString(" (%1 change%2)").arg(n).arg(n == 1 ? "" : "s");
  setWindowTitle(name + (dirty_ ? " *" : "") + " — Orrery");
}

}  // namespace orrery::gui
