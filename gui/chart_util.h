#pragma once
// Small helpers every panel uses: number formatting with units (the
// library's own formatter, so the GUI prints what the CLI prints), chart
// styling that follows the system's light or dark palette, and export of
// charts (PNG, SVG) and tables (CSV).

#include <QString>
#include <cstdint>

class QAbstractItemModel;
class QWidget;
class QChart;
class QChartView;
class QValueAxis;

namespace orrery::gui {

QString Seconds(double s);      // "12.34 s", "1.5 ms"
QString Bytes(double b);        // "80 GB", decimal units always
QString Number(double v, int digits = 4);
QString Percent(double fraction);
// A signed percentage with its sign always shown: "+12.3 %", "-4.0 %".
QString SignedPercent(double pct, int decimals = 1);
QString Usd(double usd);        // "$1.23 M"
QString Grouped(uint64_t n);    // "2,637,558"
// A printf format for a value axis over [lo, hi] with `ticks` ticks, with
// the decimals that keep neighbouring labels apart: 11.1 .. 11.4 in 5 ticks
// steps 0.075, so "%.2f" (11.10, 11.18, 11.25, ...), where "%.3g" printed
// 11.2 twice.
QString AxisLabelFormat(double lo, double hi, int ticks = 5);
// A round tick step (1, 2 or 5 times a power of ten) that cuts `span` into
// about `ticks` intervals: 17.7 s -> 5 s (0, 5, 10, 15), 81.6 GB -> 20 GB,
// 0.9 -> 0.2. 0 for a span that is not positive and finite.
double NiceTickStep(double span, int ticks = 5);
// Ticks `axis` (a QValueAxis over [0, max] or [min, max]) at multiples of
// NiceTickStep of its range, labelled with the decimals that step needs,
// without widening the range as QValueAxis::applyNiceNumbers does (0..22.4
// became 0..30, a quarter of the chart empty).
void RoundTicks(QValueAxis* axis);

// True when the application palette's window colour is dark (the system's
// dark theme).
bool DarkPalette();
// Theme, no animation, legend at the bottom.
void StyleChart(QChart* chart);

// Saves `view`'s chart as PNG or SVG by the file's suffix. False on failure.
bool SaveChart(QChartView* view, const QString& file);
// Asks for a file name and saves the chart; `base` suggests a name.
void ExportChartDialog(QWidget* parent, QChartView* view, const QString& base);
// Writes a table model as CSV (header row, then the displayed text).
bool SaveCsv(const QAbstractItemModel* model, const QString& file);
void ExportCsvDialog(QWidget* parent, const QAbstractItemModel* model, const QString& base);

}  // namespace orrery::gui
