#pragma once
// How often the parts of a system fail, how long a restart takes, how much a
// node's step time varies, and where checkpoints go: the inputs of goodput
// (core/goodput/goodput.h). Two optional sections of a system document:
//
//   system:
//     reliability: {device_mtbf: 1230.8 d, restart_time: 10 min}
//     storage:     {node_bandwidth: 1 GB/s, async_checkpoint: true}
//
// Failures are modelled as independent exponential (memoryless) events, as in
// Young 1974 and Daly 2006; a synchronous job stops on any one of them, so the
// job's failure rate is the sum of its parts' rates.

#include "core/base/param.h"

namespace orrery::hardware {

struct ReliabilitySpec {
  // Mean time between failures of one device, its share of the host
  // included (seconds; 0 = never fails). Default: Meta's RSC-1, 6.50
  // failures per 1000 node-days of 8 A100s (Kokolis et al. 2024, "Revisiting
  // Reliability in Large-Scale Machine Learning Research Clusters", HPCA 2025,
  // arXiv 2410.21680) = 8000 / 6.50 = 1230.8 device-days.
  double device_mtbf = 1230.8 * 86400;
  double node_mtbf = 0;    // per node, beyond the devices' share (0 = folded into device_mtbf)
  double link_mtbf = 0;    // per device's scale-out link: NIC, cable, switch port (0 = folded)
  double job_mtbf = 0;     // per job, independent of its size: software, maintenance (0 = none)
  double restart_time = 600;  // seconds from a failure to training again, checkpoint read excluded
  // Mean extra step time of one node as a fraction of the step, exponential
  // across nodes and steps (0 = no jitter): a synchronous step waits for the
  // slowest node, E[max of n] = mean x H_n.
  double node_jitter = 0;
};

struct StorageSpec {
  double write_bandwidth = 0;  // bytes/s the checkpoint store takes in all (0 = no limit beyond nodes)
  double read_bandwidth = 0;   // bytes/s it serves at a restart (0 = write_bandwidth's figure)
  // bytes/s one node writes to the store. Default: Llama 3's Tectonic store
  // sustains 2 TB/s for 16,384 H100s = 2,048 nodes (Grattafiori et al. 2024,
  // "The Llama 3 Herd of Models", Sec. 3.3.1): about 1 GB/s per node.
  double node_bandwidth = 1e9;
  // The step stalls only while the state is copied to host memory; the
  // write to the store runs behind training (CheckFreq, Mohan et al. FAST
  // 2021 Sec. 4; Gemini, Wang et al. SOSP 2023).
  bool async_checkpoint = false;
};

const base::Schema<ReliabilitySpec>& ReliabilitySchema();
const base::Schema<StorageSpec>& StorageSchema();

}  // namespace orrery::hardware
