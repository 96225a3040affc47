#include "hardware/reliability_spec.h"

namespace orrery::hardware {

using base::Dimension;

const base::Schema<ReliabilitySpec>& ReliabilitySchema() {
  static const base::Schema<ReliabilitySpec> schema = [] {
    base::Schema<ReliabilitySpec> s(
        "reliability",
        "Failure rates, restart time and step-time jitter (goodput; docs/goodput.md). A job "
        "stops on any failure of its parts; rates add.");
    s.Quantity("device_mtbf", &ReliabilitySpec::device_mtbf, Dimension::kTime, 0, 1e12, "1230.8 d",
               "Mean time between failures of one device, its share of the host included; 0 = "
               "never. Default: 6.50 failures per 1000 node-days of 8 GPUs (Meta RSC-1, Kokolis "
               "et al. 2024, arXiv 2410.21680).")
        .Quantity("node_mtbf", &ReliabilitySpec::node_mtbf, Dimension::kTime, 0, 1e12, "0 s",
                  "Mean time between failures of one node's shared parts (host, PSU, NIC) beyond "
                  "device_mtbf; 0 = none (folded into device_mtbf).")
        .Quantity("link_mtbf", &ReliabilitySpec::link_mtbf, Dimension::kTime, 0, 1e12, "0 s",
                  "Mean time between failures of one device's scale-out link (cable, switch "
                  "port); 0 = none (folded into device_mtbf).")
        .Quantity("job_mtbf", &ReliabilitySpec::job_mtbf, Dimension::kTime, 0, 1e12, "0 s",
                  "Mean time between interruptions of the job whatever its size (software, "
                  "maintenance); 0 = none.")
        .Quantity("restart_time", &ReliabilitySpec::restart_time, Dimension::kTime, 0, 1e7,
                  "10 min",
                  "From a failure to training again (detection, rescheduling, start-up), the "
                  "checkpoint read excluded. The default is an assumption: no published figure "
                  "for large LLM jobs was found.")
        .Real("node_jitter", &ReliabilitySpec::node_jitter, 0, 10, "0",
              "Mean extra step time of one node as a fraction of the step, exponential across "
              "nodes (0 = none); a synchronous step waits for the slowest node.");
    return s;
  }();
  return schema;
}

const base::Schema<StorageSpec>& StorageSchema() {
  static const base::Schema<StorageSpec> schema = [] {
    base::Schema<StorageSpec> s("storage", "Where checkpoints are written and read (goodput).");
    s.Quantity("write_bandwidth", &StorageSpec::write_bandwidth, Dimension::kBandwidth, 0, 1e16,
               "0 B/s",
               "Bandwidth the checkpoint store takes in, all nodes together; 0 = no limit "
               "beyond node_bandwidth x nodes.")
        .Quantity("read_bandwidth", &StorageSpec::read_bandwidth, Dimension::kBandwidth, 0, 1e16,
                  "0 B/s", "Bandwidth the store serves at a restart; 0 = write_bandwidth.")
        .Quantity("node_bandwidth", &StorageSpec::node_bandwidth, Dimension::kBandwidth, 0, 1e14,
                  "1 GB/s",
                  "Bandwidth from one node to the store; 0 = no per-node limit. Default: Llama "
                  "3's store, 2 TB/s sustained for 2,048 nodes (Grattafiori et al. 2024, Sec. "
                  "3.3.1).")
        .Bool("async_checkpoint", &StorageSpec::async_checkpoint, "false",
              "Training stalls only while each device copies its shard to host memory (over "
              "system.host_bandwidth); the write runs behind training (CheckFreq, Gemini).");
    return s;
  }();
  return schema;
}

}  // namespace orrery::hardware
