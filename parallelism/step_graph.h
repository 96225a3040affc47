#pragma once
// The task graph of one training iteration of one data-parallel replica: every
// pipeline stage (one device each; the tensor-parallel ranks of a stage are
// symmetric and act as one), its compute stream and its communication
// streams, for a pipeline schedule. base::Simulator replays it; Analyze()
// turns the replay into iteration time, busy/idle time, bubble and in-flight
// activations per stage.
//
// Streams of one stage (one Chrome-trace track each):
//   compute  F, B, W, R passes and the optimizer step, in schedule order
//   tp       tensor-parallel collectives of each pass (exposed: after the pass;
//            overlapped: beside the pass's GEMMs)
//   pp       point-to-point sends to the neighbouring stage; the sender waits
//            for its send to finish before its next pass (Megatron's
//            synchronous p2p), or, overlapped (StepSpec::p2p_overlap), only
//            the receiver does
//   dp       gradient reduce-scatter/all-reduce buckets, ZeRO parameter
//            all-gathers
//
// Schedules, with p stages, m microbatches, v chunks per device, F/B/W the
// forward, input-gradient and weight-gradient passes of a whole stage:
//   GPipe        all F, then all B                   (Huang et al. 2019)
//   1F1B         p-1-s warm-up F on stage s, then one F one B, then the
//                remaining B; iteration (m+p-1)(F+B)  (Narayanan et al. 2021,
//                Sec. 2.2.1, PipeDream-Flush)
//   interleaved  v chunks per device, Megatron's order: chunk (k/p) mod v of
//                microbatch (k/(pv))p + k mod p, 2(p-1-s)+(v-1)p warm-up;
//                iteration m(F+B) + (p-1)(F+B)/v; needs m a multiple of p
//                (Narayanan et al. 2021, Sec. 2.2.2)
//   ZB-H1        1F1B with the backward split into B and W; stage s delays its
//                W passes by s microbatches so every stage holds p
//                microbatches; bubble (p-1)(F+B-W) (Qi et al. 2024, "Zero
//                Bubble Pipeline Parallelism", ICLR, Sec. 3.1, Fig. 3)
//   V-shape      two chunks per device placed as a V (device d holds virtual
//                stages d and 2p-1-d, so the first and last layers share
//                device 0), B/W split, and an activation-memory limit; the
//                order is built greedily from the V building block with the
//                limit set to the paper's V-Min ((p+4)/3), V-Half ((p+2)/2)
//                or V-ZB (p) microbatches of a 1F1B stage, rounded down
//                (Qi et al. 2024, "Pipeline Parallelism with Controllable
//                Memory", NeurIPS, Sec. 3-4, Table 1). Our greedy order is not
//                the paper's hand-squeezed one: its bubble is the paper's at
//                V-Min/V-Half and larger than the paper's near-zero at V-ZB.
//   DualPipe     bidirectional: microbatches 0..m/2-1 enter at device 0 and
//                run virtual stages 0..p-1 (device g), microbatches
//                m/2..m-1 enter at device p-1 and run virtual stages
//                p..2p-1 (device 2p-1-g), so device d holds stage d of the
//                one direction (chunk 0) and stage p-1-d of the other
//                (chunk 1); each device's order is the eight steps of
//                deepseek-ai/DualPipe's step() (dualpipe.py: nF0, nF0F1,
//                nB1W1F1, nF0B1F1B0, nB1F1B0, nB1B0, nWB0, nW), the
//                zero-bubble backwards split into B and W; needs p and m
//                even, m >= 2p (DeepSeek-V3 Technical Report, Sec. 3.2.1,
//                Fig. 5; bubble (p/2-1)(F&B+B-3W), Table 2). A paired
//                forward and backward run one after the other on the
//                compute stream: their communication is what the caller
//                leaves exposed after the overlap (forward_comm,
//                backward_comm), and sends run beside the next passes.

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/event_queue.h"

namespace orrery::parallelism {

enum class PipelineSchedule { kGpipe, kOneFOneB, kInterleaved, kZeroBubbleH1, kVMin, kVHalf, kVZeroBubble, kDualPipe };
const char* PipelineScheduleName(PipelineSchedule s);
// Whether the schedule runs the backward as separate B and W passes.
bool SplitsBackward(PipelineSchedule s);

// One model chunk on one pipeline device, one microbatch. Seconds, before any
// straggler slowdown.
struct ChunkWork {
  double forward = 0;
  double backward = 0;         // input and weight gradients together
  double backward_weight = 0;  // the weight-gradient part of `backward` (the W pass)
  double recompute = 0;        // forward recomputation, run just before the backward
  double tp_forward = 0;       // tensor-parallel collectives of the forward
  double tp_backward = 0;      // ... of the backward (input gradients)
  double tp_recompute = 0;     // ... of the recomputation
  double forward_comm = 0;     // exposed communication inside the forward (CP ring, EP
                               // all-to-all), on the compute stream, not slowed by a straggler
  double backward_comm = 0;    // ... inside the backward (the B pass when split)
  double head_tp_comm = 0;     // the part of forward_comm + backward_comm that is the
                               // embedding's and LM head's TP collectives (reported as TP)
  double activation_bytes = 0; // stored from the forward until the backward is done
  double param_gather = 0;     // ZeRO-3: all-gather of the chunk's weights, before each pass
  double grad_reduce = 0;      // ZeRO-3: reduce-scatter of the chunk's gradients, per microbatch
  // ZeRO-3: the units the chunk's weights are gathered and its gradients
  // reduce-scattered in (its layers: one FSDP unit per transformer block,
  // Zhao et al. 2023, "PyTorch FSDP", VLDB, Sec. 3.3; DeepSpeed ZeRO-3
  // gathers module by module). With overlap a pass waits for its first
  // unit's gather only, and its last unit's compute for the rest; its
  // reduce-scatter runs behind it but for the last unit's share. At least 1.
  double zero3_units = 1;
  // ZeRO-3 once per step (StepSpec::zero3_once_per_step): FSDP2's copy-out
  // of the chunk's gathered weights, on the compute stream before the first
  // microbatch's forward (seconds; per-microbatch copy-outs are in the passes).
  double zero3_copy_out = 0;
};

// Data-parallel work of one pipeline device per iteration (ZeRO 0-2).
struct StageDp {
  double grad_reduce = 0;   // all-reduce (ZeRO-0) or reduce-scatter of all gradients
  double param_gather = 0;  // ZeRO-1/2: all-gather of the updated weights
  int64_t buckets = 1;      // the gradient (and gather) buckets
  double optimizer = 0;     // the optimizer step on the compute stream
  // ZeRO-Offload (gradients to the host and weights back) plus what the
  // activation copies to host memory leave exposed over the step
  // (training.offload_activation_layers).
  double offload = 0;
};

struct StepSpec {
  int64_t stages = 1;
  int64_t microbatches = 1;
  int64_t chunks = 1;                 // v; 2 for the V-shape schedules and DualPipe
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  std::vector<ChunkWork> work;        // [stage * chunks + chunk]
  std::vector<StageDp> dp;            // [stage]; empty = no data-parallel work
  std::vector<double> slowdown;       // [stage], >= 1, scales compute; empty = 1
  double p2p = 0;                     // one activation or gradient between neighbours
  // Sends run on the pp stream beside the sender's next passes (interleaved
  // 1F1B with overlap_p2p_comm: parallelism::OverlapsPipelineSends); only
  // the receiver waits for them. false: the sender waits (synchronous p2p).
  bool p2p_overlap = false;
  bool dp_overlap = true;             // buckets overlap the last backward / first forward;
                                      // ZeRO-3 gathers prefetch during the previous pass
  bool zero3 = false;                 // per-pass gathers and per-microbatch reduce-scatters
  bool zero3_gather_for_recompute = false;  // full recompute gathers the weights again
  // ZeRO-3 under a pipeline (engine::Zero3GathersOncePerStep): a chunk's
  // weights gathered once, before its first microbatch's forward, and kept;
  // its gradients reduce-scattered once, after its last backward, with the
  // compute stream waiting for them (PyTorch pipelining's perform_reduce_grad).
  bool zero3_once_per_step = false;
  // With overlap, a backward-side pass's gather (its recomputation's or its
  // backward's) is prefetched during the pass before it (true), or issued
  // only once that pass is done (false: FSDP1 BACKWARD_POST).
  bool zero3_backward_prefetch = true;
};

enum class TaskKind : uint8_t {
  kForward, kBackward, kBackwardInput, kBackwardWeight, kRecompute, kTpComm, kSend,
  kGradReduce, kParamGather, kOptimizer, kOffload, kJoin,
};
const char* TaskKindName(TaskKind k);

enum class StreamKind : uint8_t { kCompute, kTp, kPp, kDp };
inline constexpr int kStreamsPerStage = 4;
const char* StreamName(StreamKind s);

struct TaskInfo {
  TaskKind kind = TaskKind::kForward;
  StreamKind stream = StreamKind::kCompute;
  int32_t stage = 0;
  int32_t chunk = 0;
  int32_t microbatch = -1;  // -1 for per-iteration tasks
  int32_t bucket = -1;      // DP gradient/parameter buckets: which one
};

struct StepGraph {
  base::TaskGraph graph;
  std::vector<TaskInfo> info;  // per task
  int64_t stages = 0, microbatches = 0, chunks = 0;
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  std::vector<double> activation_bytes;  // [stage * chunks + chunk]
};

enum class StepError {
  kNone,
  kBadShape,             // stages, microbatches or chunks < 1, or work of the wrong size
  kInterleaveMultiple,   // interleaved: m is not a multiple of p
  kVShapeChunks,         // V-shape schedules need exactly 2 chunks per device
  kDualPipeShape,        // DualPipe needs 2 chunks, p and m even, m >= 2p
  kDeadlock,             // the order and the dependencies form a cycle (a bug)
};
const char* StepErrorText(StepError e);

// Builds the graph. Returns kNone on success.
StepError BuildStepGraph(const StepSpec& spec, StepGraph& out);

struct StageStats {
  double busy = 0;            // compute stream busy (s)
  double idle = 0;            // iteration - busy
  double forward = 0, backward = 0, recompute = 0, optimizer = 0;  // busy by kind
  // Waiting of the compute stream, by what it waited on (s): the part of a
  // gap that overlaps the blocking task's run is charged to that task's kind
  // (TP comm, p2p send, DP/ZeRO comm, offload); the rest is pipeline bubble.
  double wait_tp = 0, wait_p2p = 0, wait_dp = 0, wait_offload = 0, wait_bubble = 0;
  double end = 0;             // when the stage's last task finished
  int64_t peak_in_flight = 0; // chunk-microbatches whose activations are held at once
  double peak_activation_bytes = 0;
};

struct StepResult {
  bool complete = false;
  double iteration = 0;       // makespan (s)
  double bubble_fraction = 0; // pipeline-bubble wait (wait_bubble) over stages x iteration
  int32_t critical_stage = 0; // the stage whose last task ends last
  int64_t tasks = 0;
  int64_t events = 0;
  std::vector<StageStats> stages;
};

StepResult Analyze(const StepGraph& g, const base::Timeline& t);

// Per-device pass order of the V-shape greedy (exposed for tests): passes of
// device d as (kind, virtual stage, microbatch). `cap` is the limit in
// chunk-microbatches held at once (F started, W not finished), >= 2.
struct PassRef {
  TaskKind kind;
  int32_t virtual_stage;
  int32_t microbatch;
  // DualPipe's overlapped pair (dualpipe.py, _forward_backward_chunk): this
  // forward runs fused with the backward after it, which it waits for the
  // input of, and its output leaves when that backward is done.
  bool fused = false;
};
std::vector<std::vector<PassRef>> VShapeOrder(int64_t p, int64_t m, int64_t cap,
                                              const std::vector<ChunkWork>& work);
// The V-shape limit in chunk-microbatches for a schedule and p.
int64_t VShapeCap(PipelineSchedule s, int64_t p);
// Per-device pass order of DualPipe (exposed for tests), p and m even,
// m >= 2p: virtual stages as StepSpec's DualPipe places them.
std::vector<std::vector<PassRef>> DualPipeOrder(int64_t p, int64_t m);

}  // namespace orrery::parallelism
