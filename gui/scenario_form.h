#pragma once
// The scenario editor: presets (scenario, model, system) with their cited
// values, and one input per knob of the parameter registry, grouped by
// section. An input refuses what the registry refuses and shows the same
// error text as `orrery check`, under the field.

#include <QWidget>
#include <map>
#include <string>
#include <vector>

#include "gui/backend.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QTabWidget;
class QTimer;

namespace orrery::gui {

class ScenarioForm : public QWidget {
  Q_OBJECT
 public:
  explicit ScenarioForm(ScenarioDoc* doc, QWidget* parent = nullptr);

  // Shows the scenario's values (rebuilding the inputs when its registry
  // paths changed, e.g. another number of network tiers) and the errors.
  void Show(const BuiltScenario& built);
  // The input of a registry path (for tests and "go to field").
  QWidget* FieldWidget(const std::string& path) const;
  QLabel* ErrorLabel(const std::string& path) const;

 signals:
  void Edited();                              // the document's overrides or picks changed
  void OpenPreset(const QString& scenario);   // a scenario preset was picked

 private:
  struct Field {
    FormField spec;
    QWidget* input = nullptr;  // QLineEdit or QComboBox
    QLabel* label = nullptr;
    QLabel* error = nullptr;
  };
  void Rebuild(const engine::Scenario& s);
  void Commit(const std::string& path, const QString& text);
  void ApplyFilter(const QString& text);

  ScenarioDoc* doc_;
  QComboBox* scenario_ = nullptr;
  QComboBox* model_ = nullptr;
  QComboBox* system_ = nullptr;
  QLabel* cited_ = nullptr;
  QLabel* banner_ = nullptr;
  QLineEdit* filter_ = nullptr;
  QTabWidget* sections_ = nullptr;
  std::vector<std::string> paths_;
  std::map<std::string, Field> fields_;
  bool updating_ = false;
};

}  // namespace orrery::gui
