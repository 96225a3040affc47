#pragma once
// A domain-free discrete-event simulator: tasks with durations and
// dependencies, run on resources (streams), in simulated time.
//
//   resource 0 (a stream)   [ t0 ][  t2  ]      [ t5 ]
//   resource 1 (a stream)         [ t1 ]   [  t3  ]
//   no resource (a delay)               [t4]
//                           ─────────────────────────────▶ time
//
// A task starts when every task it depends on has finished and its resource
// is free; it then holds the resource for its duration. A resource runs one
// task at a time, chosen by its discipline:
//   kProgramOrder  the tasks in the order they were added to the resource,
//                  like a CUDA stream or an MPI rank's program: a task whose
//                  dependencies are not met blocks the ones behind it.
//   kPriority      whichever ready task has the lowest priority value (ties:
//                  the lower task id), like a scheduler picking from a queue.
// A task without a resource starts as soon as its dependencies finish (a pure
// delay, e.g. a wire latency, or a zero-duration join).
//
// Time advances from event to event (a task finishing). Events are kept in a
// binary heap ordered by (time, insertion number): equal times are processed
// first-in first-out, so a run is deterministic, bit for bit, on any machine.
// Every event of one instant is processed before a kPriority resource picks
// its next task, so the pick sees every task that became ready then.
// Nothing here knows what a task means; callers attach meaning by task id.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace orrery::base {

// Min-heap (4-ary) of events ordered by time, ties broken by insertion order.
class EventQueue {
 public:
  struct Event {
    double time = 0;
    uint64_t sequence = 0;  // insertion number: the tie-breaker
    int32_t payload = 0;
  };
  void Reserve(size_t n) { heap_.reserve(n); }
  void Push(double time, int32_t payload);
  Event Pop();  // the earliest event; the queue must not be empty
  const Event& top() const { return heap_.front(); }  // the earliest; not empty
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }

 private:
  static constexpr size_t kArity = 4;
  static bool Before(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.sequence < b.sequence);
  }
  std::vector<Event> heap_;
  uint64_t next_sequence_ = 0;
};

enum class Discipline { kProgramOrder, kPriority };

inline constexpr int32_t kNoResource = -1;

// The graph to simulate: resources, tasks, dependencies. Ids are dense,
// starting at 0, in the order things are added.
class TaskGraph {
 public:
  void Reserve(size_t tasks, size_t dependencies);
  int32_t AddResource(Discipline d = Discipline::kProgramOrder);
  // A task of `duration` seconds (>= 0) on `resource` (or kNoResource).
  // `priority` matters only on kPriority resources (lower runs first).
  int32_t AddTask(int32_t resource, double duration, int64_t priority = 0);
  // `after` may start only when `before` has finished.
  void AddDependency(int32_t before, int32_t after);
  void SetDuration(int32_t task, double duration) { duration_[static_cast<size_t>(task)] = duration; }

  size_t task_count() const { return duration_.size(); }
  size_t resource_count() const { return discipline_.size(); }
  size_t dependency_count() const { return dep_before_.size(); }
  int32_t resource(int32_t task) const { return resource_[static_cast<size_t>(task)]; }
  double duration(int32_t task) const { return duration_[static_cast<size_t>(task)]; }
  // Calls f(before, after) for every dependency, in the order they were added.
  template <class F>
  void ForEachDependency(F&& f) const {
    for (size_t k = 0; k < dep_before_.size(); ++k) f(dep_before_[k], dep_after_[k]);
  }

 private:
  friend class Simulator;
  std::vector<Discipline> discipline_;
  std::vector<int32_t> resource_;
  std::vector<double> duration_;
  std::vector<int64_t> priority_;
  std::vector<int32_t> dep_before_, dep_after_;
};

// The outcome of a simulation.
struct Timeline {
  // False when some task never ran: the dependencies and the program order
  // of a resource form a cycle (a deadlock). `stuck` then names one task
  // that could not start.
  bool complete = false;
  int32_t stuck = -1;
  int64_t events = 0;          // task completions processed
  double makespan = 0;         // latest finish (seconds)
  std::vector<double> start;   // per task; NaN for a task that never ran
  std::vector<double> finish;
};

// Runs a TaskGraph. Keeps its buffers between runs, so simulating many
// graphs of similar size allocates only for the first.
class Simulator {
 public:
  Timeline Run(const TaskGraph& g);
  void Run(const TaskGraph& g, Timeline& out);

 private:
  void Ready(const TaskGraph& g, int32_t t, double now);
  void TryStart(const TaskGraph& g, int32_t r, double now);
  void Start(const TaskGraph& g, int32_t t, double now);
  void Due(int32_t r);  // a kPriority resource should choose at the end of this instant

  EventQueue events_;
  Timeline* out_ = nullptr;
  // Dependencies as compressed rows: successors of task t are
  // succ_[first_[t] .. first_[t + 1]).
  std::vector<int32_t> first_, succ_;
  std::vector<int32_t> cursor_;       // scratch while building the lists
  std::vector<int32_t> pending_;      // unfinished dependencies per task
  std::vector<int32_t> next_on_resource_;
  std::vector<int32_t> head_;         // per resource: next task in program order
  std::vector<uint8_t> busy_;         // per resource
  std::vector<uint8_t> to_try_flag_;  // per resource: a kPriority choice is due
  std::vector<int32_t> to_try_;       // those resources, in the order they became due
  // Per kPriority resource: a heap of ready tasks.
  std::vector<std::vector<int32_t>> ready_;
};

}  // namespace orrery::base
