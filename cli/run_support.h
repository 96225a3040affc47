#pragma once
// Support shared by the long-running verbs (search, sweep): progress on
// stderr and the process group (one process, or MPI ranks).

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "core/search/sweep.h"

namespace orrery::cli {

// Progress reporter: on a terminal a bar with rate and ETA redrawn in place;
// otherwise a plain line every `interval_s` seconds; nothing when quiet.
// `unit` names what is counted ("shapes", "points").
class Progress {
 public:
  Progress(std::ostream& err, std::string label, std::string unit, bool quiet,
           double interval_s = 10);
  void Update(uint64_t done, uint64_t total);
  void Finish();
  std::function<void(uint64_t, uint64_t)> Callback() {
    return [this](uint64_t d, uint64_t t) { Update(d, t); };
  }

 private:
  std::ostream& err_;
  std::string label_, unit_;
  bool quiet_ = false;
  bool tty_ = false;
  double interval_s_ = 10;
  double start_ = 0, last_ = -1;
  bool drawn_ = false;
};

// The processes of this run: MPI ranks when built with MPI and started by
// mpirun (OMPI_COMM_WORLD_SIZE is set), else this process alone. MPI is
// finalised when the returned object is destroyed.
std::unique_ptr<engine::Comm> MakeComm();

// Whether this binary was built with MPI (ORRERY_WITH_MPI).
bool BuiltWithMpi();

}  // namespace orrery::cli
