// orrery-gui: the desktop face of Orrery.
//   orrery-gui [SCENARIO.yaml | scenario preset]
//   orrery-gui --screenshots DIR     saves a PNG of each tab and exits
//                                    (scripts/gui-screenshots.sh)

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLabel>
#include <QPalette>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QThread>
#include <cstdio>
#include <functional>

#include "gui/main_window.h"
#include "gui/panels.h"

namespace {

// Runs the event loop until `done` or `ms` milliseconds pass.
void WaitFor(const std::function<bool()>& done, int ms) {
  QElapsedTimer t;
  t.start();
  while (!done() && t.elapsed() < ms) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    QThread::msleep(10);
  }
  for (int i = 0; i < 20; ++i) QCoreApplication::processEvents();
}

bool Shot(orrery::gui::MainWindow& w, const QString& dir, const QString& name) {
  WaitFor([] { return false; }, 300);
  const QString file = QDir(dir).filePath(name + ".png");
  const bool ok = w.grab().save(file);
  std::printf("%s %s\n", ok ? "saved" : "FAILED", qPrintable(file));
  return ok;
}

// A tour of the tabs on shipped presets, one PNG each.
int Screenshots(orrery::gui::MainWindow& w, const QString& dir, const QElapsedTimer& since_start) {
  using namespace orrery::gui;
  QDir().mkpath(dir);
  w.resize(1500, 900);
  w.show();
  if (!w.OpenScenario("gpt3-175b-a100")) return 1;
  bool ok = true;
  w.tabs()->setCurrentWidget(w.training());
  WaitFor([&] { return w.training()->step_label()->property("iteration_s").isValid(); }, 5000);
  std::printf("window shown with its first estimate %lld ms after start\n",
              static_cast<long long>(since_start.elapsed()));
  w.training()->TogglePin();
  w.SetOverride("training.recompute", "full");
  WaitFor([] { return false; }, 500);
  ok &= Shot(w, dir, "training");
  w.training()->TogglePin();
  w.SetOverride("training.recompute", "");
  w.tabs()->setCurrentWidget(w.timeline());
  WaitFor([&] { return !w.timeline()->busy(); }, 20000);
  ok &= Shot(w, dir, "timeline");
  w.tabs()->setCurrentWidget(w.search());
  w.search()->SetKeep(40);
  w.search()->Run();
  WaitFor([&] { return !w.search()->running(); }, 300000);
  ok &= Shot(w, dir, "search");
  QTemporaryDir tmp;
  w.tabs()->setCurrentWidget(w.sweep());
  w.sweep()->SetStorePath(tmp.filePath("what-if.sqlite"));
  w.sweep()->Run();
  WaitFor([&] { return !w.sweep()->running(); }, 300000);
  ok &= Shot(w, dir, "sweep");
  // Two axes as a heatmap: bandwidth of the outer tier by device memory.
  w.sweep()->SetStorePath(tmp.filePath("what-if-2d.sqlite"));
  w.sweep()->EnableSecondAxis(true);
  w.sweep()->Run();
  WaitFor([&] { return !w.sweep()->running(); }, 300000);
  w.sweep()->SetHeatmap(true);
  ok &= Shot(w, dir, "sweep-heatmap");
  w.sweep()->SetHeatmap(false);
  w.sweep()->EnableSecondAxis(false);
  // A preset system whose tiers carry switch radixes, so parts are counted.
  if (!w.OpenScenario("llama3-70b-h100")) return 1;
  w.tabs()->setCurrentWidget(w.network());
  ok &= Shot(w, dir, "network");
  if (!w.OpenScenario("llama2-70b-h100-infer")) return 1;
  w.tabs()->setCurrentWidget(w.inference());
  WaitFor([&] { return !w.inference()->busy(); }, 300000);
  ok &= Shot(w, dir, "inference");
  w.tabs()->setCurrentWidget(w.validation());
  WaitFor([&] { return !w.validation()->busy() && w.validation()->runs() > 0; }, 120000);
  w.validation()->SetGroup("device");
  w.validation()->SelectLine(36);  // a Megatron-LM README H100 row, +24 %
  WaitFor([&] { return !w.validation()->detail_busy(); }, 60000);
  ok &= Shot(w, dir, "validation");
  // The same window in a dark palette (as a dark system theme gives it).
  QApplication::setStyle("Fusion");
  QPalette dark;
  dark.setColor(QPalette::Window, QColor(45, 45, 48));
  dark.setColor(QPalette::WindowText, Qt::white);
  dark.setColor(QPalette::Base, QColor(30, 30, 32));
  dark.setColor(QPalette::AlternateBase, QColor(50, 50, 54));
  dark.setColor(QPalette::Text, Qt::white);
  dark.setColor(QPalette::Button, QColor(55, 55, 58));
  dark.setColor(QPalette::ButtonText, Qt::white);
  dark.setColor(QPalette::Highlight, QColor(42, 130, 218));
  dark.setColor(QPalette::Mid, QColor(120, 120, 120));
  QApplication::setPalette(dark);
  if (!w.OpenScenario("llama3-70b-h100")) return 1;
  w.tabs()->setCurrentWidget(w.training());
  WaitFor([] { return false; }, 500);
  ok &= Shot(w, dir, "training-dark");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  QElapsedTimer since_start;
  since_start.start();
  QApplication app(argc, argv);
  QApplication::setOrganizationName("orrery");
  QApplication::setApplicationName("orrery-gui");
  const QStringList args = QApplication::arguments();
  if (args.size() > 2 && args[1] == "--screenshots") {
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, QDir::tempPath());
    orrery::gui::MainWindow w;
    return Screenshots(w, args[2], since_start);
  }
  orrery::gui::MainWindow w;
  QString first = args.size() > 1 ? args[1] : QString();
  if (first.isEmpty()) {
    const QStringList recent = QSettings().value("recentFiles").toStringList();
    for (const QString& f : recent)
      if ((f.endsWith(".yaml") || f.endsWith(".yml")) && QFileInfo::exists(f)) {
        first = f;
        break;
      }
  }
  if (first.isEmpty() || !w.OpenScenario(first)) w.OpenScenario("gpt3-175b-a100");
  w.show();
  return QApplication::exec();
}
