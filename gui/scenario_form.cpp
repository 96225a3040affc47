#include "gui/scenario_form.h"

#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

namespace orrery::gui {

namespace {

// The model picker's first item while a config.json is the model.
const QString kConfigPrefix = "config: ";

QString TabName(const std::string& section) {
  if (section == "system.device") return "device";
  if (section.rfind("system.network[", 0) == 0)
    return "net " + QString::fromStdString(section.substr(15, section.size() - 16));
  return QString::fromStdString(section);
}

QString Tip(const FormField& f) {
  QString t = "<b>" + QString::fromStdString(f.path).toHtmlEscaped() + "</b><br>" +
              QString::fromStdString(f.info.help).toHtmlEscaped() + "<br><i>" +
              QString::fromStdString(f.info.RuleText()).toHtmlEscaped() + "</i>";
  if (!f.info.default_text.empty())
    t += "<br>default: " + QString::fromStdString(f.info.default_text).toHtmlEscaped();
  return t;
}

}  // namespace

ScenarioForm::ScenarioForm(ScenarioDoc* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  auto* top = new QVBoxLayout(this);
  top->setContentsMargins(4, 4, 4, 4);
  auto* presets = new QFormLayout;
  scenario_ = new QComboBox;
  model_ = new QComboBox;
  system_ = new QComboBox;
  scenario_->setObjectName("scenarioPreset");
  model_->setObjectName("modelPreset");
  system_->setObjectName("systemPreset");
  const Presets p = ListPresets();
  scenario_->addItem("(choose a scenario preset)");
  for (const auto& n : p.scenarios) scenario_->addItem(QString::fromStdString(n));
  model_->addItem("(as in the scenario)");
  for (const auto& n : p.models) model_->addItem(QString::fromStdString(n));
  system_->addItem("(as in the scenario)");
  for (const auto& n : p.systems) system_->addItem(QString::fromStdString(n));
  presets->addRow("Scenario", scenario_);
  presets->addRow("Model", model_);
  presets->addRow("System", system_);
  top->addLayout(presets);
  cited_ = new QLabel;
  cited_->setObjectName("citedValues");
  cited_->setWordWrap(true);
  cited_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  cited_->setStyleSheet("QLabel { color: palette(mid); font-size: 9pt; }");
  top->addWidget(cited_);
  banner_ = new QLabel;
  banner_->setObjectName("scenarioErrors");
  banner_->setWordWrap(true);
  banner_->setStyleSheet("QLabel { color: #d9534f; }");
  banner_->hide();
  top->addWidget(banner_);
  filter_ = new QLineEdit;
  filter_->setPlaceholderText("Filter keys (e.g. bandwidth, tp, recompute)");
  filter_->setClearButtonEnabled(true);
  top->addWidget(filter_);
  sections_ = new QTabWidget;
  sections_->setDocumentMode(true);
  sections_->setUsesScrollButtons(true);
  top->addWidget(sections_, 1);

  connect(scenario_, &QComboBox::activated, this, [this](int i) {
    if (i > 0) emit OpenPreset(scenario_->itemText(i));
  });
  connect(model_, &QComboBox::activated, this, [this](int i) {
    if (i == 0 && model_->itemText(0).startsWith(kConfigPrefix)) return;  // the config stays picked
    doc_->SetModelPreset(i > 0 ? model_->itemText(i).toStdString() : "");
    emit Edited();
  });
  connect(system_, &QComboBox::activated, this, [this](int i) {
    doc_->SetSystemPreset(i > 0 ? system_->itemText(i).toStdString() : "");
    emit Edited();
  });
  connect(filter_, &QLineEdit::textChanged, this, &ScenarioForm::ApplyFilter);
}

QWidget* ScenarioForm::FieldWidget(const std::string& path) const {
  auto it = fields_.find(path);
  return it == fields_.end() ? nullptr : it->second.input;
}

QLabel* ScenarioForm::ErrorLabel(const std::string& path) const {
  auto it = fields_.find(path);
  return it == fields_.end() ? nullptr : it->second.error;
}

void ScenarioForm::Commit(const std::string& path, const QString& text) {
  if (updating_) return;
  const std::string t = text.trimmed().toStdString();
  if (t == doc_->OverrideOf(path)) return;
  doc_->Set(path, t);
  emit Edited();
}

void ScenarioForm::Rebuild(const engine::Scenario& s) {
  const int current = sections_->currentIndex();
  while (sections_->count() > 0) {
    QWidget* w = sections_->widget(0);
    sections_->removeTab(0);
    w->deleteLater();
  }
  fields_.clear();
  paths_.clear();
  QFormLayout* form = nullptr;
  std::string section;
  for (const FormField& f : FormFields(s)) {
    if (form == nullptr || f.section != section) {
      section = f.section;
      auto* page = new QWidget;
      form = new QFormLayout(page);
      form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
      form->setLabelAlignment(Qt::AlignRight);
      auto* scroll = new QScrollArea;
      scroll->setWidgetResizable(true);
      scroll->setWidget(page);
      sections_->addTab(scroll, TabName(section));
    }
    Field field;
    field.spec = f;
    const QString path = QString::fromStdString(f.path);
    if (f.info.type == base::ParamType::kEnum || f.info.type == base::ParamType::kBool) {
      auto* combo = new QComboBox;
      if (f.info.type == base::ParamType::kBool) combo->addItems({"true", "false"});
      for (const auto& c : f.info.choices) combo->addItem(QString::fromStdString(c));
      connect(combo, &QComboBox::activated, this,
              [this, p = f.path, combo](int) { Commit(p, combo->currentText()); });
      field.input = combo;
    } else {
      auto* edit = new QLineEdit;
      edit->setPlaceholderText(QString::fromStdString(f.info.RuleText()));
      auto* timer = new QTimer(edit);
      timer->setSingleShot(true);
      timer->setInterval(350);
      connect(edit, &QLineEdit::textEdited, timer, qOverload<>(&QTimer::start));
      connect(timer, &QTimer::timeout, this, [this, p = f.path, edit] { Commit(p, edit->text()); });
      connect(edit, &QLineEdit::editingFinished, this, [this, p = f.path, edit, timer] {
        timer->stop();
        Commit(p, edit->text());
      });
      field.input = edit;
    }
    field.input->setObjectName("field:" + path);
    field.input->setToolTip(Tip(f));
    field.label = new QLabel(QString::fromStdString(f.info.key));
    field.label->setToolTip(Tip(f));
    field.error = new QLabel;
    field.error->setObjectName("error:" + path);
    field.error->setWordWrap(true);
    field.error->setStyleSheet("QLabel { color: #d9534f; }");
    field.error->hide();
    auto* box = new QWidget;
    auto* v = new QVBoxLayout(box);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(1);
    v->addWidget(field.input);
    v->addWidget(field.error);
    form->addRow(field.label, box);
    paths_.push_back(f.path);
    fields_.emplace(f.path, field);
  }
  if (current >= 0 && current < sections_->count()) sections_->setCurrentIndex(current);
  ApplyFilter(filter_->text());
}

void ScenarioForm::Show(const BuiltScenario& built) {
  if (!built.scenario) {
    banner_->setText(QString::fromStdString(built.errors.empty() ? "" : built.errors.front()));
    banner_->setVisible(!built.errors.empty());
    return;
  }
  const engine::Scenario& s = *built.scenario;
  std::vector<std::string> paths;
  for (const auto& f : FormFields(s)) paths.push_back(f.path);
  if (paths != paths_) Rebuild(s);
  updating_ = true;
  std::map<QString, int> tab_errors;
  for (auto& [path, f] : fields_) {
    const std::string over = doc_->OverrideOf(path);
    const QString text = QString::fromStdString(over.empty() ? ValueText(s, path) : over);
    if (auto* edit = qobject_cast<QLineEdit*>(f.input)) {
      if (!edit->hasFocus() || edit->text().isEmpty()) edit->setText(text);
    } else if (auto* combo = qobject_cast<QComboBox*>(f.input)) {
      combo->setCurrentText(text);
    }
    QFont font = f.label->font();
    font.setBold(!over.empty());
    f.label->setFont(font);
    auto err = built.field_errors.find(path);
    f.error->setText(err == built.field_errors.end() ? "" : QString::fromStdString(err->second));
    f.error->setVisible(err != built.field_errors.end());
    if (err != built.field_errors.end()) ++tab_errors[TabName(f.spec.section)];
  }
  for (int i = 0; i < sections_->count(); ++i) {
    QString name = sections_->tabText(i);
    name = name.section(" \u26a0", 0, 0);
    sections_->setTabText(i, tab_errors.count(name) ? name + " \u26a0" : name);
  }
  updating_ = false;
  QStringList general;
  for (const auto& e : built.errors) general << QString::fromStdString(e);
  // Errors whose path is not a field of the form (e.g. a cross-check on the
  // whole plan) are shown above the form.
  for (const auto& [path, text] : built.field_errors)
    if (!fields_.count(path)) general << QString::fromStdString(text);
  banner_->setText(general.join("\n"));
  banner_->setVisible(!general.isEmpty());
  cited_->setText(QString::fromStdString(DescribeModel(s) + "\n" + DescribeSystem(s)));
  // The scenario picker names what is open: its preset, or its file.
  const QFileInfo open(QString::fromStdString(doc_->file()));
  const int preset = scenario_->findText(open.completeBaseName());
  const bool is_preset =
      preset > 0 && open.absolutePath() == QFileInfo(QString::fromStdString(PresetsDir() + "/scenarios/x")).absolutePath();
  scenario_->setItemText(0, is_preset ? "(choose a scenario preset)" : "file: " + open.fileName());
  scenario_->setCurrentIndex(is_preset ? preset : 0);
  // A Hugging Face config.json picked as the model shows as the first item.
  const QString model = QString::fromStdString(doc_->model_preset());
  const int model_index = model.isEmpty() ? 0 : model_->findText(model);
  model_->setItemText(0, model_index < 0 ? kConfigPrefix + QFileInfo(model).fileName() : "(as in the scenario)");
  model_->setCurrentIndex(std::max(0, model_index));
  const QString system = QString::fromStdString(doc_->system_preset());
  system_->setCurrentIndex(system.isEmpty() ? 0 : std::max(0, system_->findText(system)));
}

void ScenarioForm::ApplyFilter(const QString& text) {
  for (auto& [path, f] : fields_) {
    auto* form = qobject_cast<QFormLayout*>(f.label->parentWidget()->layout());
    if (form == nullptr) continue;
    const bool show = text.isEmpty() || QString::fromStdString(path).contains(text, Qt::CaseInsensitive);
    form->setRowVisible(f.label, show);
  }
}

}  // namespace orrery::gui
