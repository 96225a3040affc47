#pragma once
// orrery-gui's window: the scenario form on the left, the result tabs on the
// right. Every edit rebuilds the scenario and re-estimates it on a worker
// thread; the newest edit wins.

#include <QMainWindow>
#include <QStringList>

#include "gui/backend.h"

class QMenu;
class QTabWidget;

namespace orrery::gui {

class ScenarioForm;
class TrainingPanel;
class TimelinePanel;
class SearchPanel;
class SweepPanel;
class InferencePanel;
class NetworkPanel;
class ValidationPanel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens a scenario file or preset name; false (with the errors shown) on failure.
  bool OpenScenario(const QString& file_or_preset);
  bool SaveScenario(const QString& file);
  // Takes a Hugging Face config.json as the model (the library reads one
  // wherever a model preset is named); false with the error shown when it
  // cannot be read.
  bool OpenModelConfig(const QString& file);
  // Writes the capacity-planning report of the scenario as shown to `html`
  // on a worker thread; the status bar says when it is written or why not.
  void ExportReport(const QString& html, bool search);
  bool exporting() const { return exporting_; }
  // Sets one registry override as the form does (empty text removes it).
  void SetOverride(const std::string& path, const std::string& text);
  const ScenarioDoc& doc() const { return doc_; }
  const BuiltScenario& built() const { return built_; }

  ScenarioForm* form() const { return form_; }
  TrainingPanel* training() const { return training_; }
  TimelinePanel* timeline() const { return timeline_; }
  SearchPanel* search() const { return search_; }
  SweepPanel* sweep() const { return sweep_; }
  InferencePanel* inference() const { return inference_; }
  NetworkPanel* network() const { return network_; }
  ValidationPanel* validation() const { return validation_; }
  QTabWidget* tabs() const { return tabs_; }

 protected:
  void closeEvent(QCloseEvent* e) override;
  void changeEvent(QEvent* e) override;

 private:
  void Rebuild();           // after an edit: build, show errors, re-estimate
  void RefreshVisibleTab();
  void AddRecent(const QString& file);
  void UpdateRecentMenu();
  void UpdateTitle();

  ScenarioDoc doc_;
  BuiltScenario built_;
  QString file_;            // where Save writes ("" = ask)
  ScenarioForm* form_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  TrainingPanel* training_ = nullptr;
  TimelinePanel* timeline_ = nullptr;
  SearchPanel* search_ = nullptr;
  SweepPanel* sweep_ = nullptr;
  InferencePanel* inference_ = nullptr;
  NetworkPanel* network_ = nullptr;
  ValidationPanel* validation_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  std::vector<bool> stale_;  // per tab: the scenario changed since it was drawn
  int generation_ = 0;
  bool dirty_ = false;
  bool exporting_ = false;
};

}  // namespace orrery::gui
