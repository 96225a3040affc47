#pragma once
// Support shared by the long-running verbs (search, sweep): progress on
// stderr and the process group (one process, or MPI ranks).

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "core/api/common.h"
#include "core/api/sweep.h"

namespace orrery::cli {

// Progress reporter: on a terminal a bar with rate and ETA redrawn in place;
// otherwise a plain line every `interval_s` seconds; nothing when quiet.
// The ETA is the remaining units at the rate measured since the first unit
// finished (start-up time, such as enumerating a search space, is not
// counted as work), and is shown only once that rate rests on at least half
// a second and one unit, so it is never a wild guess from the first tick.
// `unit` names what is counted ("shapes", "points").
class Progress {
 public:
  Progress(std::ostream& err, std::string label, std::string unit, bool quiet,
           double interval_s = 10);
  void Update(uint64_t done, uint64_t total);
  void Finish();
  // The progress callback of an API call's Control.
  ProgressFn Callback() {
    return [this](uint64_t d, uint64_t t, std::string_view) { Update(d, t); };
  }

 private:
  std::ostream& err_;
  std::string label_, unit_;
  bool quiet_ = false;
  bool tty_ = false;
  double interval_s_ = 10;
  double start_ = 0, last_ = -1;
  double first_at_ = -1;    // when the first unit was done
  uint64_t first_done_ = 0;  // units done at that moment
  bool drawn_ = false;
};

// The processes of this run: MPI ranks when built with MPI and started by
// mpirun (OMPI_COMM_WORLD_SIZE is set), else this process alone. MPI is
// finalised when the returned object is destroyed.
std::unique_ptr<engine::Comm> MakeComm();

// Whether this binary was built with MPI (ORRERY_WITH_MPI).
bool BuiltWithMpi();

}  // namespace orrery::cli
