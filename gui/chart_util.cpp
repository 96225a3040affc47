#include "gui/chart_util.h"

#include <QAbstractItemModel>
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QPainter>
#include <QPalette>
#include <QSvgGenerator>
#include <QTextStream>
#include <QValueAxis>
#include <QLocale>
#include <algorithm>
#include <cmath>

#include "core/base/format.h"
#include "core/base/quantity.h"

namespace orrery::gui {

QString Seconds(double s) {
  return QString::fromStdString(base::FormatQuantity(s, base::Dimension::kTime));
}
// Decimal units whatever the value, as the CLI's tables print computed bytes
// (base::FormatBytes): a KV cache of exactly 5440 MiB reads 5.704 GB beside
// weights of 17.24 GB, not "5440 MiB".
QString Bytes(double b) { return QString::fromStdString(base::FormatBytes(b)); }
QString Number(double v, int digits) {
  // Large counts read better grouped ("12,100") than in e-notation.
  if (std::abs(v) >= 1e4 && std::abs(v) < 1e15) return QLocale(QLocale::English).toString(v, 'f', 0);
  return QString::fromStdString(base::FormatNumber(v, digits));
}
QString Grouped(uint64_t n) { return QString::fromStdString(base::FormatGrouped(n)); }
QString AxisLabelFormat(double lo, double hi, int ticks) {
  const double step = (hi - lo) / std::max(1, ticks - 1);
  if (!std::isfinite(step) || step <= 0) return "%.3g";
  const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step))), 0, 6);
  return QString("%.%1f").arg(decimals);
}
double NiceTickStep(double span, int ticks) {
  const double raw = span / std::max(1, ticks);
  if (!std::isfinite(raw) || raw <= 0) return 0;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / magnitude;
  return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * magnitude;
}
void RoundTicks(QValueAxis* axis) {
  const double step = NiceTickStep(axis->max() - axis->min());
  if (step <= 0) return;
  axis->setTickType(QValueAxis::TicksDynamic);
  axis->setTickAnchor(0);
  axis->setTickInterval(step);
  const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 6);
  axis->setLabelFormat(QString("%.%1f").arg(decimals));
}
QString Percent(double fraction) { return QString::number(100 * fraction, 'f', 1) + " %"; }
QString SignedPercent(double pct, int decimals) {
  return (pct >= 0 ? "+" : "") + QString::number(pct, 'f', decimals) + " %";
}
QString Usd(double usd) {
  if (usd >= 1e9) return "$" + Number(usd / 1e9, 4) + " B";
  if (usd >= 1e6) return "$" + Number(usd / 1e6, 4) + " M";
  if (usd >= 1e3) return "$" + Number(usd / 1e3, 4) + " k";
  return "$" + Number(usd, 4);
}

bool DarkPalette() {
  const QColor c = QApplication::palette().color(QPalette::Window);
  return c.lightness() < 128;
}

void StyleChart(QChart* chart) {
  chart->setTheme(DarkPalette() ? QChart::ChartThemeDark : QChart::ChartThemeLight);
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(4, 4, 4, 4));
}

bool SaveChart(QChartView* view, const QString& file) {
  if (file.endsWith(".svg", Qt::CaseInsensitive)) {
    QSvgGenerator gen;
    gen.setFileName(file);
    gen.setSize(view->size());
    gen.setViewBox(QRect(QPoint(0, 0), view->size()));
    gen.setTitle(view->chart()->title());
    QPainter p;
    if (!p.begin(&gen)) return false;
    view->render(&p);
    return p.end();
  }
  return view->grab().save(file);
}

void ExportChartDialog(QWidget* parent, QChartView* view, const QString& base) {
  const QString file = QFileDialog::getSaveFileName(parent, "Export chart", base + ".png",
                                                    "PNG image (*.png);;SVG drawing (*.svg)");
  if (file.isEmpty()) return;
  if (!SaveChart(view, file))
    QMessageBox::warning(parent, "Export chart", file + ": cannot write the file");
}

namespace {
QString CsvField(QString s) {
  if (!s.contains(',') && !s.contains('"') && !s.contains('\n')) return s;
  s.replace("\"", "\"\"");
  return "\"" + s + "\"";
}
}  // namespace

bool SaveCsv(const QAbstractItemModel* model, const QString& file) {
  QFile f(file);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Text)) return false;
  QTextStream out(&f);
  for (int c = 0; c < model->columnCount(); ++c)
    out << (c ? "," : "") << CsvField(model->headerData(c, Qt::Horizontal).toString());
  out << "\n";
  for (int r = 0; r < model->rowCount(); ++r) {
    for (int c = 0; c < model->columnCount(); ++c)
      out << (c ? "," : "") << CsvField(model->data(model->index(r, c)).toString());
    out << "\n";
  }
  return out.status() == QTextStream::Ok;
}

void ExportCsvDialog(QWidget* parent, const QAbstractItemModel* model, const QString& base) {
  const QString file =
      QFileDialog::getSaveFileName(parent, "Export table", base + ".csv", "CSV (*.csv)");
  if (file.isEmpty()) return;
  if (!SaveCsv(model, file)) QMessageBox::warning(parent, "Export table", file + ": cannot write the file");
}

}  // namespace orrery::gui
