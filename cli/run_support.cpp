#include "cli/run_support.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iomanip>
#include <sstream>

#include "core/base/format.h"

#ifdef ORRERY_WITH_MPI
#include <mpi.h>
#endif

namespace orrery::cli {

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string Duration(double s) {
  if (!(s >= 0) || s > 1e7) return "--";
  const long t = static_cast<long>(s + 0.5);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, t / 60 % 60);
  else if (t >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%lds", t);
  return buf;
}

}  // namespace

Progress::Progress(std::ostream& err, std::string label, std::string unit, bool quiet,
                   double interval_s)
    : err_(err), label_(std::move(label)), unit_(std::move(unit)), quiet_(quiet),
      interval_s_(interval_s), start_(Now()) {
  // A bar only when stderr is the terminal and the stream is the real one.
  tty_ = &err == &std::cerr && isatty(STDERR_FILENO) == 1;
}

void Progress::Update(uint64_t done, uint64_t total) {
  if (quiet_ || total == 0) return;
  const double now = Now();
  const double elapsed = now - start_;
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  if (first_at_ < 0 && done > 0) {
    first_at_ = now;
    first_done_ = done;
  }
  // Rate of the work since the first unit: start-up is not work.
  const double window = first_at_ >= 0 ? now - first_at_ : 0;
  const double work_rate =
      window >= 0.5 && done > first_done_ ? static_cast<double>(done - first_done_) / window : 0;
  const double eta = done >= total ? 0
                     : work_rate > 0 ? static_cast<double>(total - done) / work_rate
                                     : -1;
  const double frac = static_cast<double>(done) / static_cast<double>(total);
  if (tty_) {
    if (last_ >= 0 && now - last_ < 0.1 && done < total) return;
    last_ = now;
    constexpr int kWidth = 30;
    const int fill = static_cast<int>(frac * kWidth);
    std::ostringstream os;
    os << "\r" << label_ << " [" << std::string(static_cast<size_t>(fill), '#')
       << std::string(static_cast<size_t>(kWidth - fill), '.') << "] " << done << "/" << total
       << " " << unit_ << "  " << base::FormatRate(rate, unit_) << "  ETA "
       << Duration(eta) << "   ";
    err_ << os.str() << std::flush;
    drawn_ = true;
    return;
  }
  if (last_ >= 0 && now - last_ < interval_s_) return;
  if (last_ < 0 && elapsed < interval_s_ && done < total) {
    // The first plain line waits one interval: short runs print nothing.
    return;
  }
  last_ = now;
  err_ << label_ << ": " << done << "/" << total << " " << unit_ << " (" << std::fixed
       << std::setprecision(1) << 100 * frac << " %), " << base::FormatRate(rate, unit_) << ", ETA " << Duration(eta) << "\n"
       << std::defaultfloat << std::flush;
}

void Progress::Finish() {
  if (quiet_) return;
  if (tty_ && drawn_) err_ << "\n" << std::flush;
}

bool BuiltWithMpi() {
#ifdef ORRERY_WITH_MPI
  return true;
#else
  return false;
#endif
}

#ifdef ORRERY_WITH_MPI
namespace {

class MpiComm final : public engine::Comm {
 public:
  MpiComm() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiComm() override { MPI_Finalize(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void Broadcast(std::string& text) override {
    long long n = static_cast<long long>(text.size());
    MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    text.resize(static_cast<size_t>(n));
    if (n > 0) MPI_Bcast(text.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
  }
  std::vector<std::string> Gather(const std::string& text) override {
    int n = static_cast<int>(text.size());
    std::vector<int> sizes(static_cast<size_t>(size_));
    MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<int> offsets(static_cast<size_t>(size_));
    int total = 0;
    for (int r = 0; r < size_; ++r) {
      offsets[static_cast<size_t>(r)] = total;
      total += sizes[static_cast<size_t>(r)];
    }
    std::string all(static_cast<size_t>(rank_ == 0 ? total : 0), '\0');
    MPI_Gatherv(text.data(), n, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0,
                MPI_COMM_WORLD);
    std::vector<std::string> out;
    if (rank_ != 0) return out;
    for (int r = 0; r < size_; ++r)
      out.push_back(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                               static_cast<size_t>(sizes[static_cast<size_t>(r)])));
    return out;
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace
#endif

std::unique_ptr<engine::Comm> MakeComm() {
#ifdef ORRERY_WITH_MPI
  const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (world != nullptr && *world != 0) return std::make_unique<MpiComm>();
#endif
  return std::make_unique<engine::LocalComm>();
}

}  // namespace orrery::cli
