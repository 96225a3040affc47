#pragma once
// The event engine's step drawn as one row per (stage, stream): compute, TP,
// PP (point-to-point sends) and DP. Idle time, the pipeline bubble, shows as
// empty track. Wheel zooms around the cursor, dragging pans, hovering a task
// shows its name, start and duration.

#include <QWidget>

#include "gui/backend.h"

namespace orrery::gui {

class TimelineView : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineView(QWidget* parent = nullptr);
  void SetTimeline(const TimelineResult& t);
  void ResetZoom();
  QSize sizeHint() const override { return {800, 400}; }

 protected:
  void paintEvent(QPaintEvent*) override;
  void wheelEvent(QWheelEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;
  void mouseReleaseEvent(QMouseEvent*) override;

 private:
  struct Row {
    int stage, stream;
  };
  int RowOf(int stage, int stream) const;
  double XOf(double t) const;
  double TimeOf(double x) const;
  const TimelineTask* TaskAt(const QPoint& p) const;

  TimelineResult t_;
  std::vector<Row> rows_;
  double view_start_ = 0, view_span_ = 1;
  bool dragging_ = false;
  QPoint drag_from_;
  double drag_start_ = 0;
  static constexpr int kLabelWidth = 110;
  static constexpr int kAxisHeight = 22;
};

}  // namespace orrery::gui
