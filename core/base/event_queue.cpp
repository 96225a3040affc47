#include "core/base/event_queue.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace orrery::base {

// --- EventQueue ---------------------------------------------------------------

// A 4-ary heap: half the levels of a binary one, and the four children of a
// node share a cache line or two. Both sifts move a hole instead of swapping.
// The order (time, then insertion number) is a strict total order, so the
// events come out in the same sequence as from any other correct heap.
void EventQueue::Push(double time, int32_t payload) {
  const Event e{time, next_sequence_++, payload};
  heap_.push_back(e);
  size_t i = heap_.size() - 1;
  while (i > 0) {
    const size_t parent = (i - 1) / kArity;
    if (!Before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

EventQueue::Event EventQueue::Pop() {
  const Event top = heap_.front();
  const Event last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return top;
  size_t i = 0;
  while (true) {
    const size_t first = kArity * i + 1;
    if (first >= n) break;
    size_t best = first;
    if (first + kArity <= n) {
      // All four children: a tournament of two pairs (the minimum is unique).
      const size_t a = Before(heap_[first + 1], heap_[first]) ? first + 1 : first;
      const size_t b = Before(heap_[first + 3], heap_[first + 2]) ? first + 3 : first + 2;
      best = Before(heap_[b], heap_[a]) ? b : a;
    } else {
      for (size_t c = first + 1; c < n; ++c)
        if (Before(heap_[c], heap_[best])) best = c;
    }
    if (!Before(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  return top;
}

// --- TaskGraph ----------------------------------------------------------------

void TaskGraph::Reserve(size_t tasks, size_t dependencies) {
  resource_.reserve(tasks);
  duration_.reserve(tasks);
  priority_.reserve(tasks);
  dep_before_.reserve(dependencies);
  dep_after_.reserve(dependencies);
}

int32_t TaskGraph::AddResource(Discipline d) {
  discipline_.push_back(d);
  return static_cast<int32_t>(discipline_.size() - 1);
}

int32_t TaskGraph::AddTask(int32_t resource, double duration, int64_t priority) {
  resource_.push_back(resource);
  duration_.push_back(duration);
  priority_.push_back(priority);
  return static_cast<int32_t>(duration_.size() - 1);
}

void TaskGraph::AddDependency(int32_t before, int32_t after) {
  dep_before_.push_back(before);
  dep_after_.push_back(after);
}

// --- Simulator ----------------------------------------------------------------

Timeline Simulator::Run(const TaskGraph& g) {
  Timeline t;
  Run(g, t);
  return t;
}

void Simulator::Run(const TaskGraph& g, Timeline& out) {
  const size_t n = g.task_count();
  const size_t nr = g.resource_count();
  out_ = &out;
  out.complete = false;
  out.stuck = -1;
  out.events = 0;
  out.makespan = 0;
  out.start.assign(n, std::numeric_limits<double>::quiet_NaN());
  out.finish.assign(n, std::numeric_limits<double>::quiet_NaN());

  // Successor lists by counting sort on the `before` task (stable: the order
  // dependencies were added is kept, which keeps runs deterministic).
  first_.assign(n + 1, 0);
  pending_.assign(n, 0);
  for (size_t k = 0; k < g.dep_before_.size(); ++k) {
    ++first_[static_cast<size_t>(g.dep_before_[k]) + 1];
    ++pending_[static_cast<size_t>(g.dep_after_[k])];
  }
  for (size_t t = 0; t < n; ++t) first_[t + 1] += first_[t];
  succ_.resize(g.dep_before_.size());
  cursor_.assign(first_.begin(), first_.end() - 1);
  for (size_t k = 0; k < g.dep_before_.size(); ++k)
    succ_[static_cast<size_t>(cursor_[static_cast<size_t>(g.dep_before_[k])]++)] = g.dep_after_[k];

  // Program order of every resource as a linked list through the tasks.
  next_on_resource_.assign(n, -1);
  head_.assign(nr, -1);
  cursor_.assign(nr, -1);  // per resource: the last task added so far
  std::vector<int32_t>& tail = cursor_;
  for (size_t t = 0; t < n; ++t) {
    const int32_t r = g.resource_[t];
    if (r == kNoResource) continue;
    const size_t ri = static_cast<size_t>(r);
    if (tail[ri] < 0) head_[ri] = static_cast<int32_t>(t);
    else next_on_resource_[static_cast<size_t>(tail[ri])] = static_cast<int32_t>(t);
    tail[ri] = static_cast<int32_t>(t);
  }
  ready_.resize(nr);
  for (auto& h : ready_) h.clear();
  busy_.assign(nr, 0);
  events_ = EventQueue();
  events_.Reserve(std::min<size_t>(n, 1 << 16));

  to_try_flag_.assign(nr, 0);
  to_try_.clear();
  for (size_t t = 0; t < n; ++t)
    if (pending_[t] == 0) Ready(g, static_cast<int32_t>(t), 0.0);
  for (size_t r = 0; r < nr; ++r) TryStart(g, static_cast<int32_t>(r), 0.0);
  to_try_.clear();
  std::fill(to_try_flag_.begin(), to_try_flag_.end(), 0);

  size_t done = 0;
  while (!events_.empty()) {
    const double now = events_.top().time;
    // Every completion of this instant (tasks of zero duration started now
    // complete now too), then the choices of the priority resources.
    while (!events_.empty() && events_.top().time == now) {
      const int32_t t = events_.Pop().payload;
      const size_t ti = static_cast<size_t>(t);
      out.finish[ti] = now;
      out.makespan = std::max(out.makespan, now);
      ++out.events;
      ++done;
      for (int32_t k = first_[ti]; k < first_[ti + 1]; ++k) {
        const int32_t s = succ_[static_cast<size_t>(k)];
        if (--pending_[static_cast<size_t>(s)] == 0) Ready(g, s, now);
      }
      const int32_t r = g.resource_[ti];
      if (r != kNoResource) {
        busy_[static_cast<size_t>(r)] = 0;
        if (g.discipline_[static_cast<size_t>(r)] == Discipline::kProgramOrder) TryStart(g, r, now);
        else Due(r);
      }
    }
    for (size_t i = 0; i < to_try_.size(); ++i) {
      const int32_t r = to_try_[i];
      to_try_flag_[static_cast<size_t>(r)] = 0;
      TryStart(g, r, now);
    }
    to_try_.clear();
  }
  out.complete = done == n;
  if (!out.complete) {
    for (size_t t = 0; t < n; ++t)
      if (std::isnan(out.start[t])) {
        out.stuck = static_cast<int32_t>(t);
        break;
      }
  }
  out_ = nullptr;
}

void Simulator::Ready(const TaskGraph& g, int32_t t, double now) {
  const int32_t r = g.resource_[static_cast<size_t>(t)];
  if (r == kNoResource) {
    Start(g, t, now);
    return;
  }
  const size_t ri = static_cast<size_t>(r);
  if (g.discipline_[ri] == Discipline::kPriority) {
    std::vector<int32_t>& h = ready_[ri];
    h.push_back(t);
    const auto later = [&g](int32_t a, int32_t b) {
      const int64_t pa = g.priority_[static_cast<size_t>(a)], pb = g.priority_[static_cast<size_t>(b)];
      return pa > pb || (pa == pb && a > b);
    };
    std::push_heap(h.begin(), h.end(), later);
    Due(r);
    return;
  }
  TryStart(g, r, now);
}

void Simulator::Due(int32_t r) {
  uint8_t& flag = to_try_flag_[static_cast<size_t>(r)];
  if (!flag) {
    flag = 1;
    to_try_.push_back(r);
  }
}

void Simulator::TryStart(const TaskGraph& g, int32_t r, double now) {
  const size_t ri = static_cast<size_t>(r);
  if (busy_[ri]) return;
  if (g.discipline_[ri] == Discipline::kProgramOrder) {
    const int32_t t = head_[ri];
    if (t < 0 || pending_[static_cast<size_t>(t)] != 0) return;
    head_[ri] = next_on_resource_[static_cast<size_t>(t)];
    Start(g, t, now);
    return;
  }
  std::vector<int32_t>& h = ready_[ri];
  if (h.empty()) return;
  const auto later = [&g](int32_t a, int32_t b) {
    const int64_t pa = g.priority_[static_cast<size_t>(a)], pb = g.priority_[static_cast<size_t>(b)];
    return pa > pb || (pa == pb && a > b);
  };
  std::pop_heap(h.begin(), h.end(), later);
  const int32_t t = h.back();
  h.pop_back();
  Start(g, t, now);
}

void Simulator::Start(const TaskGraph& g, int32_t t, double now) {
  const size_t ti = static_cast<size_t>(t);
  const int32_t r = g.resource_[ti];
  if (r != kNoResource) busy_[static_cast<size_t>(r)] = 1;
  out_->start[ti] = now;
  events_.Push(now + g.duration_[ti], t);
}

}  // namespace orrery::base
