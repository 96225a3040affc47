#include "core/estimate/chrome_trace.h"

#include <cstdio>

namespace orrery::engine {

using parallelism::StreamKind;
using parallelism::TaskKind;

namespace {

// JSON string escaping for the few characters a name or title may hold.
void Quoted(const std::string& s, std::ostream& out) {
  out << '"';
  for (const char ch : s) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out << '\\' << ch;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out << buf;
    } else {
      out << ch;
    }
  }
  out << '"';
}

// Microseconds with nanosecond resolution, without locale or exponent.
void Micros(double seconds, std::ostream& out) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3f", seconds * 1e6);
  out << buf;
}

const char* Category(TaskKind k) {
  switch (k) {
    case TaskKind::kForward: return "forward";
    case TaskKind::kBackward: return "backward";
    case TaskKind::kBackwardInput: return "backward-input";
    case TaskKind::kBackwardWeight: return "backward-weight";
    case TaskKind::kRecompute: return "recompute";
    case TaskKind::kTpComm: return "tp";
    case TaskKind::kSend: return "p2p";
    case TaskKind::kGradReduce: return "grad-reduce";
    case TaskKind::kParamGather: return "param-gather";
    case TaskKind::kOptimizer: return "optimizer";
    case TaskKind::kOffload: return "offload";
    case TaskKind::kJoin: return "join";
  }
  return "other";
}

}  // namespace

std::string TraceName(const parallelism::StepGraph& g, int32_t i) {
  const parallelism::TaskInfo& info = g.info[static_cast<size_t>(i)];
  std::string name = parallelism::TaskKindName(info.kind);
  if (info.kind == TaskKind::kTpComm) name = "TP";
  if (info.bucket >= 0) {
    name += " #" + std::to_string(info.bucket);
    if (g.chunks > 1) name += " c" + std::to_string(info.chunk);
    return name;
  }
  if (info.microbatch < 0) return name;
  name += " mb" + std::to_string(info.microbatch);
  if (g.chunks > 1) name += " c" + std::to_string(info.chunk);
  return name;
}

void WriteChromeTrace(const parallelism::StepGraph& g, const base::Timeline& t,
                      const std::string& title, std::ostream& out) {
  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"title\":";
  Quoted(title, out);
  out << ",\"schedule\":";
  Quoted(parallelism::PipelineScheduleName(g.schedule), out);
  out << ",\"stages\":" << g.stages << ",\"microbatches\":" << g.microbatches
      << ",\"chunks\":" << g.chunks << "},\n\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (int64_t s = 0; s < g.stages; ++s) {
    sep();
    out << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << s << ",\"tid\":0,\"args\":{\"name\":\"stage "
        << s << "\"}}";
    sep();
    out << "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" << s
        << ",\"tid\":0,\"args\":{\"sort_index\":" << s << "}}";
    for (int k = 0; k < parallelism::kStreamsPerStage; ++k) {
      sep();
      out << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << s << ",\"tid\":" << k
          << ",\"args\":{\"name\":\"" << parallelism::StreamName(static_cast<StreamKind>(k)) << "\"}}";
    }
  }
  const size_t n = g.info.size();
  for (size_t i = 0; i < n; ++i) {
    const parallelism::TaskInfo& info = g.info[i];
    if (info.kind == TaskKind::kJoin || g.graph.resource(static_cast<int32_t>(i)) == base::kNoResource) continue;
    sep();
    out << "{\"name\":";
    Quoted(TraceName(g, static_cast<int32_t>(i)), out);
    out << ",\"cat\":\"" << Category(info.kind) << "\",\"ph\":\"X\",\"ts\":";
    Micros(t.start[i], out);
    out << ",\"dur\":";
    Micros(t.finish[i] - t.start[i], out);
    out << ",\"pid\":" << info.stage << ",\"tid\":" << static_cast<int>(info.stream)
        << ",\"args\":{\"microbatch\":" << info.microbatch << ",\"chunk\":" << info.chunk
        << ",\"bucket\":" << info.bucket << "}}";
  }
  out << "\n]}\n";
}

}  // namespace orrery::engine
