// orrery_cuda_probe: times cuBLASLt GEMMs, device-to-device copies,
// element-wise kernels and (with NCCL and several GPUs) all-reduce on one
// CUDA device, and writes the same JSON records as the CPU probe
// (README.md, "JSON record schema").
//
// Depends on the CUDA toolkit alone so it builds on a bare GPU node:
//   nvcc -O2 -std=c++17 -gencode=arch=compute_90,code=[sm_90,compute_90] \
//        -o orrery_cuda_probe hardware/calibration/cuda_probe.cu -lcublasLt -lcublas
// (add -DORRERY_WITH_NCCL=1 -lnccl for collectives).
//
// Timing: CUDA events on one stream around `inner` back-to-back calls, after
// warm-ups; per-call time = sample / inner; medians and spread over `reps`
// samples. GEMM operands rotate over several copies when they would fit in
// L2, so small-M (decode) shapes read their weights from HBM as they do in a
// real layer stack.
//
// Exit status: 0 on success, 2 on a bad argument, 1 on a CUDA failure or
// when the output cannot be written (records measured so far are written).

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#ifdef ORRERY_WITH_NCCL
#include <nccl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "probe_record.h"
#include "sample_stats.h"

namespace orrery::calibration {
namespace {

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;
constexpr std::int64_t kGiB = 1024 * kMiB;

// Failures inside one measurement throw; the caller decides whether to skip
// the measurement or stop.
struct CudaFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw CudaFailure(std::string(what) + ": " + cudaGetErrorString(e));
}
void Check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw CudaFailure(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
  }
}

// ---------------------------------------------------------------------------
// Options

struct Options {
  bool quick = false;
  std::string out = "-";
  int device = 0;
  int reps = -1;               // -1: mode default
  int warmups = -1;            // -1: mode default
  double min_sample_s = -1.0;  // -1: mode default
  std::vector<std::string> sections = {"gemm", "copy", "elementwise", "collectives"};
  std::vector<std::string> dtypes = {"bf16", "fp16", "tf32", "fp8_e4m3"};
  std::int64_t max_copy_bytes = -1;  // -1: mode default
  bool cold_l2 = true;
};

constexpr const char* kUsage =
    "usage: orrery_cuda_probe [--quick | --full] [--out FILE] [--device N]\n"
    "                         [--reps N] [--warmups N] [--min-sample-ms X]\n"
    "                         [--sections LIST] [--dtypes LIST] [--max-copy-bytes N] [--hot-l2]\n"
    "  --quick            small grids, well under a minute\n"
    "  --full             LLM-layer and square GEMM grids, copies 1 KiB..4 GiB (default)\n"
    "  --out FILE         where the JSON goes; '-' is stdout (default). Rewritten after each section\n"
    "  --device N         CUDA device ordinal (default 0)\n"
    "  --reps N           timed samples per kernel (default: 7 quick, 20 full)\n"
    "  --warmups N        untimed calls before timing (default: 3 quick, 10 full)\n"
    "  --min-sample-ms X  calls per sample so one sample lasts X ms (default: 0.5 quick, 2 full)\n"
    "  --sections LIST    comma list of gemm,copy,elementwise,collectives (default: all)\n"
    "  --dtypes LIST      comma list of bf16,fp16,tf32,fp8_e4m3 (default: all)\n"
    "  --max-copy-bytes N largest device-to-device copy in bytes (default: 256 MiB quick, 4 GiB full)\n"
    "  --hot-l2           do not rotate GEMM operands to defeat the L2 cache\n";

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (const char c : text) {
    if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

bool ParseInt(const std::string& text, long long lo, long long hi, long long* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool ParseDouble(const std::string& text, double lo, double hi, double* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || *end != '\0' || !(v >= lo && v <= hi)) return false;
  *out = v;
  return true;
}

bool Contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// Empty on success, else the message for a bad argument.
std::string ParseArgs(int argc, char** argv, Options* o, bool* help) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string v;
    auto value = [&]() {
      if (i + 1 >= argc) return false;
      v = argv[++i];
      return true;
    };
    long long n = 0;
    if (arg == "--help" || arg == "-h") {
      *help = true;
    } else if (arg == "--quick") {
      o->quick = true;
    } else if (arg == "--full") {
      o->quick = false;
    } else if (arg == "--hot-l2") {
      o->cold_l2 = false;
    } else if (arg == "--out") {
      if (!value() || v.empty()) return "--out needs a file name";
      o->out = v;
    } else if (arg == "--device") {
      if (!value() || !ParseInt(v, 0, 1023, &n)) return "--device needs an integer in [0, 1023], got '" + v + "'";
      o->device = static_cast<int>(n);
    } else if (arg == "--reps") {
      if (!value() || !ParseInt(v, 1, 100000, &n)) return "--reps needs an integer in [1, 100000], got '" + v + "'";
      o->reps = static_cast<int>(n);
    } else if (arg == "--warmups") {
      if (!value() || !ParseInt(v, 0, 100000, &n)) return "--warmups needs an integer in [0, 100000], got '" + v + "'";
      o->warmups = static_cast<int>(n);
    } else if (arg == "--min-sample-ms") {
      double ms = 0;
      if (!value() || !ParseDouble(v, 0.0, 10000.0, &ms)) return "--min-sample-ms needs a number in [0, 10000], got '" + v + "'";
      o->min_sample_s = ms * 1e-3;
    } else if (arg == "--max-copy-bytes") {
      if (!value() || !ParseInt(v, 1024, 64 * kGiB, &n)) {
        return "--max-copy-bytes needs an integer in [1024, 68719476736], got '" + v + "'";
      }
      o->max_copy_bytes = n;
    } else if (arg == "--sections") {
      if (!value()) return "--sections needs a list";
      o->sections = SplitList(v);
      for (const auto& s : o->sections) {
        if (s != "gemm" && s != "copy" && s != "elementwise" && s != "collectives") {
          return "--sections: unknown section '" + s + "' (expected gemm, copy, elementwise, collectives)";
        }
      }
    } else if (arg == "--dtypes") {
      if (!value()) return "--dtypes needs a list";
      o->dtypes = SplitList(v);
      for (const auto& d : o->dtypes) {
        if (d != "bf16" && d != "fp16" && d != "tf32" && d != "fp8_e4m3") {
          return "--dtypes: unknown dtype '" + d + "' (expected bf16, fp16, tf32, fp8_e4m3)";
        }
      }
    } else {
      return "unknown argument '" + arg + "'";
    }
  }
  if (o->reps < 0) o->reps = o->quick ? 7 : 20;
  if (o->warmups < 0) o->warmups = o->quick ? 3 : 10;
  if (o->min_sample_s < 0) o->min_sample_s = o->quick ? 0.5e-3 : 2e-3;
  if (o->max_copy_bytes < 0) o->max_copy_bytes = o->quick ? 256 * kMiB : 4 * kGiB;
  return {};
}

// ---------------------------------------------------------------------------
// Timing

// Owns a stream and two events; times `fn(call_index)` launched on the stream.
class GpuTimer {
 public:
  GpuTimer() {
    Check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    Check(cudaEventCreate(&start_), "cudaEventCreate");
    Check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~GpuTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaStreamDestroy(stream_);
  }
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  cudaStream_t stream() const { return stream_; }

  // Per-call seconds of `reps` samples; *inner calls per sample.
  std::vector<double> Time(const std::function<void(std::int64_t)>& fn, int warmups, int reps,
                           double min_sample_s, std::int64_t* inner) {
    std::int64_t call = 0;
    for (int i = 0; i < warmups; ++i) fn(call++);
    Check(cudaStreamSynchronize(stream_), "warm-up");
    const double one = Elapsed([&] { fn(call++); });
    std::int64_t count = 1;
    if (one < min_sample_s) {
      count = static_cast<std::int64_t>(std::ceil(min_sample_s / std::max(one, 1e-7)));
      count = std::min<std::int64_t>(count, 100000);
    }
    std::vector<double> samples;
    for (int r = 0; r < reps; ++r) {
      const double t = Elapsed([&] {
        for (std::int64_t i = 0; i < count; ++i) fn(call++);
      });
      samples.push_back(t / static_cast<double>(count));
    }
    *inner = count;
    return samples;
  }

 private:
  double Elapsed(const std::function<void()>& body) {
    Check(cudaEventRecord(start_, stream_), "cudaEventRecord");
    body();
    Check(cudaGetLastError(), "launch");
    Check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    Check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0.0f;
    Check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return static_cast<double>(ms) * 1e-3;
  }

  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

// Owns one device allocation.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::int64_t bytes) {
    Check(cudaMalloc(&ptr_, static_cast<std::size_t>(bytes)), "cudaMalloc");
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  char* get() const { return static_cast<char*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

// ---------------------------------------------------------------------------
// Kernels

// Uniform values in [-scale, scale) from a 64-bit mix of the index (SplitMix64
// finaliser), so data are random-looking but reproducible.
__device__ float HashUniform(std::uint64_t i, std::uint64_t seed, float scale) {
  std::uint64_t z = i + seed * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return scale * (static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f);
}

template <typename T>
__global__ void FillKernel(T* p, std::int64_t n, std::uint64_t seed, float scale) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    p[i] = T(HashUniform(static_cast<std::uint64_t>(i), seed, scale));
  }
}

// STREAM-style kernels on float4 (16-byte accesses).
__global__ void CopyKernel(const float4* __restrict__ a, float4* __restrict__ c, std::int64_t n4) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    c[i] = a[i];
  }
}

__global__ void ScaleKernel(const float4* __restrict__ c, float4* __restrict__ b, float s, std::int64_t n4) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float4 v = c[i];
    b[i] = make_float4(s * v.x, s * v.y, s * v.z, s * v.w);
  }
}

__global__ void TriadKernel(const float4* __restrict__ b, const float4* __restrict__ c,
                            float4* __restrict__ a, float s, std::int64_t n4) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float4 x = b[i];
    const float4 y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

// Keeps every SM busy for `cycles` SM clock cycles so that clocks have
// ramped up before timing starts.
__global__ void SpinKernel(long long cycles, float* sink) {
  const long long start = clock64();
  float x = threadIdx.x;
  while (clock64() - start < cycles) x = x * 0.999f + 0.5f;
  if (x == -1.0f) *sink = x;  // never true; keeps the loop
}

// GELU, tanh form (Hendrycks & Gimpel 2016), bf16 in and out, 8 values per
// 16-byte access, fp32 arithmetic.
__device__ float Gelu(float x) {
  return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

__global__ void GeluBf16Kernel(const uint4* __restrict__ in, uint4* __restrict__ out, std::int64_t n8) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n8;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    uint4 v = in[i];
    __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&v);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 f = __bfloat1622float2(h[j]);
      h[j] = __floats2bfloat162_rn(Gelu(f.x), Gelu(f.y));
    }
    out[i] = v;
  }
}

// Block-wide reduction over 256 threads; `op` is max or sum.
template <typename Op>
__device__ float BlockReduce(float v, Op op, float* shared) {
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  float r = shared[0];
  for (int w = 1; w < static_cast<int>(blockDim.x / 32); ++w) r = op(r, shared[w]);
  __syncthreads();
  return r;
}

// Row softmax, bf16 in and out, fp32 arithmetic; one 256-thread block per row.
// Compulsory traffic is one read and one write of the matrix; the second and
// third passes over a row mostly hit L1/L2.
__global__ void SoftmaxBf16Kernel(const __nv_bfloat16* __restrict__ in, __nv_bfloat16* __restrict__ out,
                                  std::int64_t cols) {
  __shared__ float shared[32];
  const __nv_bfloat16* x = in + blockIdx.x * cols;
  __nv_bfloat16* y = out + blockIdx.x * cols;
  float mx = -INFINITY;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) mx = fmaxf(mx, __bfloat162float(x[c]));
  mx = BlockReduce(mx, [](float a, float b) { return fmaxf(a, b); }, shared);
  float sum = 0.0f;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += __expf(__bfloat162float(x[c]) - mx);
  sum = BlockReduce(sum, [](float a, float b) { return a + b; }, shared);
  const float inv = 1.0f / sum;
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    y[c] = __float2bfloat16(__expf(__bfloat162float(x[c]) - mx) * inv);
  }
}

// ---------------------------------------------------------------------------
// Device facts

struct DeviceInfo {
  int ordinal = 0;
  cudaDeviceProp prop{};
  int sm_clock_khz = 0;
  int mem_clock_khz = 0;
  int mem_bus_bits = 0;
};

int Attribute(cudaDeviceAttr attr, int device) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, attr, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return v;
}

int GridFor(const DeviceInfo& d, std::int64_t work_items, int block) {
  const std::int64_t wanted = (work_items + block - 1) / block;
  const std::int64_t cap = static_cast<std::int64_t>(d.prop.multiProcessorCount) * 32;
  return static_cast<int>(std::max<std::int64_t>(1, std::min(wanted, cap)));
}

template <typename T>
void Fill(const DeviceInfo& d, void* p, std::int64_t bytes, std::uint64_t seed, float scale, cudaStream_t s) {
  const std::int64_t n = bytes / static_cast<std::int64_t>(sizeof(T));
  FillKernel<T><<<GridFor(d, n, 256), 256, 0, s>>>(static_cast<T*>(p), n, seed, scale);
  Check(cudaGetLastError(), "FillKernel");
}

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ProbeHeader MakeHeader(const Options& o, const DeviceInfo& d, const std::string& command_line) {
  ProbeHeader h;
  h.probe = "cuda";
  h.mode = o.quick ? "quick" : "full";
  char host[256] = {};
  h.host = gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
  h.device = d.prop.name;
  h.compiler = "nvcc " + std::to_string(__CUDACC_VER_MAJOR__) + "." + std::to_string(__CUDACC_VER_MINOR__) +
               "." + std::to_string(__CUDACC_VER_BUILD__);
#if defined(__VERSION__)
  h.compiler += ", host " + std::string(__VERSION__);
#endif
  h.date_utc = UtcNow();
  h.command_line = command_line;
  h.threads = 1;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  auto add = [&](const char* key, const std::string& value) { h.extra.emplace_back(key, value); };
  add("device_ordinal", std::to_string(d.ordinal));
  add("compute_capability", std::to_string(d.prop.major) + "." + std::to_string(d.prop.minor));
  add("sm_count", std::to_string(d.prop.multiProcessorCount));
  add("global_memory_bytes", std::to_string(d.prop.totalGlobalMem));
  add("l2_bytes", std::to_string(d.prop.l2CacheSize));
  add("sm_clock_max_khz", std::to_string(d.sm_clock_khz));
  add("memory_clock_max_khz", std::to_string(d.mem_clock_khz));
  add("memory_bus_bits", std::to_string(d.mem_bus_bits));
  add("cuda_driver_api_version", std::to_string(driver));
  add("cuda_runtime_version", std::to_string(runtime));
  add("cublaslt_version", std::to_string(cublasLtGetVersion()));
  add("gemm_timing", "cuBLASLt heuristic's first algorithm, TN layout (weights N x K row-major, "
                     "activations M x K), fp32 accumulate, alpha=1 beta=0");
  add("l2_policy", o.cold_l2 ? "GEMM operands rotated over copies totalling >= 512 MiB when small"
                             : "hot: operands reused between calls");
  return h;
}

// ---------------------------------------------------------------------------
// GEMM

struct GemmShape {
  std::int64_t m, n, k;  // LLM convention: m tokens, n output features, k input features
};

std::vector<GemmShape> GemmGrid(bool quick) {
  std::vector<GemmShape> g;
  if (quick) {
    for (const std::int64_t m : {1, 64, 1024, 4096}) {
      g.push_back({m, 4096, 4096});
      g.push_back({m, 28672, 8192});
    }
    for (const std::int64_t s : {1024, 4096, 8192}) g.push_back({s, s, s});
    return g;
  }
  // (n, k) of typical layers: attention out / QKV of d=4096, d=12288 square,
  // d=8192 square, and the d=8192 / ffn=28672 MLP up and down projections.
  const std::pair<std::int64_t, std::int64_t> nk[] = {
      {4096, 4096}, {12288, 4096}, {12288, 12288}, {8192, 8192}, {28672, 8192}, {8192, 28672}};
  for (const std::int64_t m : {1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}) {
    for (const auto& [n, k] : nk) g.push_back({m, n, k});
  }
  for (std::int64_t s = 256; s <= 16384; s *= 2) {
    const bool listed = std::any_of(g.begin(), g.end(), [&](const GemmShape& x) {
      return x.m == s && x.n == s && x.k == s;
    });
    if (!listed) g.push_back({s, s, s});  // 4096 and 8192 are already in the layer grid
  }
  return g;
}

struct GemmTypes {
  cudaDataType_t ab;
  cudaDataType_t cd;
  cublasComputeType_t compute;
  int ab_bytes;
  int cd_bytes;
  float fill_scale;  // operand magnitude; fp8 keeps values well inside e4m3's range
};

GemmTypes TypesFor(const std::string& dtype) {
  if (dtype == "bf16") return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2, 1.0f};
  if (dtype == "fp16") return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2, 1.0f};
  if (dtype == "tf32") return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 1.0f};
  // fp8: e4m3 inputs, bf16 output (cuBLASLt's FP8 matmul needs the TN layout).
  return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 1, 2, 1.0f};
}

void FillAs(const DeviceInfo& d, cudaDataType_t type, void* p, std::int64_t bytes, std::uint64_t seed,
            float scale, cudaStream_t s) {
  switch (type) {
    case CUDA_R_16BF: Fill<__nv_bfloat16>(d, p, bytes, seed, scale, s); break;
    case CUDA_R_16F: Fill<__half>(d, p, bytes, seed, scale, s); break;
    case CUDA_R_32F: Fill<float>(d, p, bytes, seed, scale, s); break;
    case CUDA_R_8F_E4M3: Fill<__nv_fp8_e4m3>(d, p, bytes, seed, scale, s); break;
    default: throw CudaFailure("FillAs: unsupported type");
  }
}

// RAII holders for cuBLASLt descriptors.
struct LtDescriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtDescriptors() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

// About `seconds` of spinning on every SM (longer if clocks start low).
void SpinUp(const DeviceInfo& d, double seconds, cudaStream_t stream) {
  const long long khz = d.sm_clock_khz > 0 ? d.sm_clock_khz : 2000000;
  const long long cycles = static_cast<long long>(seconds * 1e3 * static_cast<double>(khz));
  SpinKernel<<<d.prop.multiProcessorCount * 4, 256, 0, stream>>>(cycles, nullptr);
  Check(cudaGetLastError(), "SpinKernel");
  Check(cudaStreamSynchronize(stream), "SpinKernel");
}

void RunGemms(const Options& o, const DeviceInfo& d, cublasLtHandle_t lt, GpuTimer& timer,
              const std::function<void(ProbeRecord)>& emit) {
  const std::vector<GemmShape> grid = GemmGrid(o.quick);
  // One set of buffers sized for the largest operand of any dtype asked for:
  // A holds weights (n x k), B activations (m x k), D outputs (m x n).
  std::int64_t a_max = 0, b_max = 0, d_max = 0;
  for (const auto& dtype : o.dtypes) {
    const GemmTypes t = TypesFor(dtype);
    for (const auto& s : grid) {
      a_max = std::max(a_max, s.n * s.k * t.ab_bytes);
      b_max = std::max(b_max, s.m * s.k * t.ab_bytes);
      d_max = std::max(d_max, s.m * s.n * t.cd_bytes);
    }
  }
  // Small operands rotate over copies inside these buffers (cold L2).
  const std::int64_t kColdBytes = 512 * kMiB;
  a_max = std::max(a_max, kColdBytes);
  b_max = std::max(b_max, kColdBytes);
  d_max = std::max(d_max, 64 * kMiB);
  DeviceBuffer a_buf(a_max), b_buf(b_max), d_buf(d_max);
  const std::int64_t workspace_bytes = 64 * kMiB;
  DeviceBuffer workspace(workspace_bytes);
  const cudaStream_t stream = timer.stream();
  Check(cudaMemsetAsync(d_buf.get(), 0, static_cast<std::size_t>(d_max), stream), "cudaMemset");

  for (const auto& dtype : o.dtypes) {
    const GemmTypes t = TypesFor(dtype);
    FillAs(d, t.ab, a_buf.get(), a_max, 1, t.fill_scale, stream);
    FillAs(d, t.ab, b_buf.get(), b_max, 2, t.fill_scale, stream);
    Check(cudaStreamSynchronize(stream), "fill");
    for (const auto& s : grid) {
      try {
        // cuBLAS is column-major. With opA = T, opB = N:
        //   D (n x m, ld n) = A^T (n x k) * B (k x m)
        // where A is the weight stored k x n (ld k, i.e. row-major n x k) and
        // B the activations stored k x m (row-major m x k). D is row-major m x n.
        LtDescriptors desc;
        Check(cublasLtMatmulDescCreate(&desc.op, t.compute, CUDA_R_32F), "MatmulDescCreate");
        const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
        Check(cublasLtMatmulDescSetAttribute(desc.op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a), "TRANSA");
        Check(cublasLtMatmulDescSetAttribute(desc.op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b), "TRANSB");
        Check(cublasLtMatrixLayoutCreate(&desc.a, t.ab, s.k, s.n, s.k), "layout A");
        Check(cublasLtMatrixLayoutCreate(&desc.b, t.ab, s.k, s.m, s.k), "layout B");
        Check(cublasLtMatrixLayoutCreate(&desc.c, t.cd, s.n, s.m, s.n), "layout C");
        Check(cublasLtMatmulPreferenceCreate(&desc.pref), "PreferenceCreate");
        const std::uint64_t ws = static_cast<std::uint64_t>(workspace_bytes);
        Check(cublasLtMatmulPreferenceSetAttribute(desc.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
              "PREF_MAX_WORKSPACE_BYTES");
        cublasLtMatmulHeuristicResult_t heuristic{};
        int found = 0;
        const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, desc.op, desc.a, desc.b, desc.c, desc.c,
                                                                 desc.pref, 1, &heuristic, &found);
        if (hs != CUBLAS_STATUS_SUCCESS || found == 0) {
          std::fprintf(stderr, "  skip gemm %s m=%lld n=%lld k=%lld: no cuBLASLt algorithm (status %d)\n",
                       dtype.c_str(), static_cast<long long>(s.m), static_cast<long long>(s.n),
                       static_cast<long long>(s.k), static_cast<int>(hs));
          continue;
        }
        const std::int64_t a_bytes = s.n * s.k * t.ab_bytes;
        const std::int64_t b_bytes = s.m * s.k * t.ab_bytes;
        const std::int64_t d_bytes = s.m * s.n * t.cd_bytes;
        auto align = [](std::int64_t x) { return (x + 255) / 256 * 256; };
        std::int64_t copies = 1;
        if (o.cold_l2) {
          const std::int64_t want = (kColdBytes + a_bytes + b_bytes - 1) / (a_bytes + b_bytes);
          copies = std::min({want, a_max / align(a_bytes), b_max / align(b_bytes), d_max / align(d_bytes),
                             static_cast<std::int64_t>(256)});
          copies = std::max<std::int64_t>(copies, 1);
        }
        const float alpha = 1.0f, beta = 0.0f;
        auto call = [&](std::int64_t i) {
          const std::int64_t c = i % copies;
          const char* pa = a_buf.get() + c * align(a_bytes);
          const char* pb = b_buf.get() + c * align(b_bytes);
          char* pd = d_buf.get() + c * align(d_bytes);
          Check(cublasLtMatmul(lt, desc.op, &alpha, pa, desc.a, pb, desc.b, &beta, pd, desc.c, pd, desc.c,
                               &heuristic.algo, workspace.get(), workspace_bytes, stream),
                "cublasLtMatmul");
        };
        std::int64_t inner = 1;
        const auto samples = timer.Time(call, o.warmups, o.reps, o.min_sample_s, &inner);
        ProbeRecord r = MakeRecord("gemm", dtype, {{"m", s.m}, {"n", s.n}, {"k", s.k}}, samples, inner,
                                   2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k),
                                   static_cast<double>(a_bytes + b_bytes + d_bytes), RateUnit::kFlopPerS);
        r.note = "cublasLt TN, heuristic #0, workspace " + std::to_string(heuristic.workspaceSize) +
                 " B, operand copies " + std::to_string(copies);
        emit(std::move(r));
      } catch (const CudaFailure& e) {
        std::fprintf(stderr, "  skip gemm %s m=%lld n=%lld k=%lld: %s\n", dtype.c_str(),
                     static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k), e.what());
        const cudaError_t sticky = cudaDeviceSynchronize();
        if (sticky != cudaSuccess) throw CudaFailure(std::string("device failed: ") + cudaGetErrorString(sticky));
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Copies and element-wise kernels

void RunCopies(const Options& o, GpuTimer& timer, const std::function<void(ProbeRecord)>& emit) {
  DeviceBuffer src(o.max_copy_bytes), dst(o.max_copy_bytes);
  Check(cudaMemsetAsync(src.get(), 1, static_cast<std::size_t>(o.max_copy_bytes), timer.stream()), "memset");
  for (std::int64_t bytes = kKiB; bytes <= o.max_copy_bytes; bytes *= 2) {
    auto call = [&](std::int64_t) {
      Check(cudaMemcpyAsync(dst.get(), src.get(), static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice,
                            timer.stream()),
            "cudaMemcpyAsync");
    };
    std::int64_t inner = 1;
    const auto samples = timer.Time(call, o.warmups, o.reps, o.min_sample_s, &inner);
    ProbeRecord r = MakeRecord("d2d_copy", "u8", {{"bytes", bytes}}, samples, inner, 0.0,
                               2.0 * static_cast<double>(bytes), RateUnit::kBytesPerS);
    r.note = "cudaMemcpyAsync device to device; bytes counts read + write";
    emit(std::move(r));
  }
}

void RunElementwise(const Options& o, const DeviceInfo& d, GpuTimer& timer,
                    const std::function<void(ProbeRecord)>& emit) {
  const std::vector<std::int64_t> sizes =
      o.quick ? std::vector<std::int64_t>{16 * kMiB, 1 * kGiB}
              : std::vector<std::int64_t>{1 * kMiB, 16 * kMiB, 256 * kMiB, 1 * kGiB};
  const std::int64_t biggest = *std::max_element(sizes.begin(), sizes.end());
  DeviceBuffer a(biggest), b(biggest), c(biggest);
  const cudaStream_t st = timer.stream();
  Fill<float>(d, a.get(), biggest, 3, 1.0f, st);
  Fill<float>(d, b.get(), biggest, 4, 1.0f, st);
  Fill<float>(d, c.get(), biggest, 5, 1.0f, st);
  Check(cudaStreamSynchronize(st), "fill");
  auto* pa = reinterpret_cast<float4*>(a.get());
  auto* pb = reinterpret_cast<float4*>(b.get());
  auto* pc = reinterpret_cast<float4*>(c.get());
  for (const std::int64_t bytes : sizes) {
    const std::int64_t n4 = bytes / 16;
    const int grid = GridFor(d, n4, 256);
    struct Kernel {
      const char* kind;
      const char* dtype;
      int arrays;
      std::function<void(std::int64_t)> fn;
    };
    const Kernel kernels[] = {
        {"copy", "fp32", 2, [&](std::int64_t) { CopyKernel<<<grid, 256, 0, st>>>(pa, pc, n4); }},
        {"scale", "fp32", 2, [&](std::int64_t) { ScaleKernel<<<grid, 256, 0, st>>>(pc, pb, 3.0f, n4); }},
        {"triad", "fp32", 3, [&](std::int64_t) { TriadKernel<<<grid, 256, 0, st>>>(pb, pc, pa, 3.0f, n4); }},
        {"gelu", "bf16", 2,
         [&](std::int64_t) {
           GeluBf16Kernel<<<grid, 256, 0, st>>>(reinterpret_cast<const uint4*>(pb), reinterpret_cast<uint4*>(pa), n4);
         }},
    };
    for (const Kernel& k : kernels) {
      std::int64_t inner = 1;
      const auto samples = timer.Time(k.fn, o.warmups, o.reps, o.min_sample_s, &inner);
      ProbeRecord r = MakeRecord(k.kind, k.dtype, {{"bytes", bytes}}, samples, inner, 0.0,
                                 static_cast<double>(k.arrays) * static_cast<double>(bytes), RateUnit::kBytesPerS);
      r.note = "grid-stride kernel, 16-byte accesses, " + std::to_string(grid) + " blocks of 256";
      emit(std::move(r));
    }
  }
  // Row softmax over bf16 matrices {rows, cols}.
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes =
      o.quick ? std::vector<std::pair<std::int64_t, std::int64_t>>{{4096, 4096}}
              : std::vector<std::pair<std::int64_t, std::int64_t>>{{4096, 4096}, {16384, 8192}, {8192, 32768}};
  for (const auto& shape : shapes) {
    const std::int64_t rows = shape.first, cols = shape.second;
    if (rows * cols * 2 > biggest) continue;
    const auto* in = reinterpret_cast<const __nv_bfloat16*>(b.get());
    auto* out = reinterpret_cast<__nv_bfloat16*>(a.get());
    auto fn = [&](std::int64_t) { SoftmaxBf16Kernel<<<static_cast<unsigned>(rows), 256, 0, st>>>(in, out, cols); };
    std::int64_t inner = 1;
    const auto samples = timer.Time(fn, o.warmups, o.reps, o.min_sample_s, &inner);
    ProbeRecord r = MakeRecord("softmax", "bf16", {{"rows", rows}, {"cols", cols}}, samples, inner, 0.0,
                               2.0 * 2.0 * static_cast<double>(rows * cols), RateUnit::kBytesPerS);
    r.note = "one 256-thread block per row; bytes = one read + one write";
    emit(std::move(r));
  }
}

// ---------------------------------------------------------------------------
// Collectives

void RunCollectives(const Options& o, const std::function<void(ProbeRecord)>& emit) {
  int count = 0;
  Check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (count < 2) {
    std::fprintf(stderr, "  collectives: %d GPU visible; all-reduce needs 2 or more, skipped\n", count);
    return;
  }
#ifndef ORRERY_WITH_NCCL
  (void)o;
  (void)emit;
  std::fprintf(stderr, "  collectives: built without NCCL (-DORRERY_WITH_NCCL=1 -lnccl), skipped\n");
#else
  std::vector<ncclComm_t> comms(count);
  std::vector<int> devs(count);
  for (int i = 0; i < count; ++i) devs[i] = i;
  if (ncclCommInitAll(comms.data(), count, devs.data()) != ncclSuccess) throw CudaFailure("ncclCommInitAll");
  const std::int64_t max_bytes = o.quick ? 256 * kMiB : 1 * kGiB;
  std::vector<void*> bufs(count);
  std::vector<cudaStream_t> streams(count);
  for (int i = 0; i < count; ++i) {
    Check(cudaSetDevice(i), "cudaSetDevice");
    Check(cudaMalloc(&bufs[i], static_cast<std::size_t>(max_bytes)), "cudaMalloc");
    Check(cudaMemset(bufs[i], 0, static_cast<std::size_t>(max_bytes)), "cudaMemset");
    Check(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking), "cudaStreamCreate");
  }
  auto all_reduce = [&](std::int64_t bytes) {
    if (ncclGroupStart() != ncclSuccess) throw CudaFailure("ncclGroupStart");
    for (int i = 0; i < count; ++i) {
      if (ncclAllReduce(bufs[i], bufs[i], static_cast<std::size_t>(bytes / 2), ncclBfloat16, ncclSum, comms[i],
                        streams[i]) != ncclSuccess) {
        throw CudaFailure("ncclAllReduce");
      }
    }
    if (ncclGroupEnd() != ncclSuccess) throw CudaFailure("ncclGroupEnd");
  };
  auto sync_all = [&] {
    for (int i = 0; i < count; ++i) Check(cudaStreamSynchronize(streams[i]), "cudaStreamSynchronize");
  };
  using WallClock = std::chrono::steady_clock;
  for (std::int64_t bytes = 1 * kKiB; bytes <= max_bytes; bytes *= 4) {
    for (int i = 0; i < o.warmups; ++i) all_reduce(bytes);
    sync_all();
    std::vector<double> samples;
    const std::int64_t inner = bytes < 16 * kMiB ? 20 : 2;
    for (int r = 0; r < o.reps; ++r) {
      const auto t0 = WallClock::now();
      for (std::int64_t i = 0; i < inner; ++i) all_reduce(bytes);
      sync_all();
      samples.push_back(std::chrono::duration<double>(WallClock::now() - t0).count() / static_cast<double>(inner));
    }
    // Bus bytes (nccl-tests convention): 2 (n-1)/n of the buffer per rank.
    const double bus_bytes = 2.0 * (count - 1) / count * static_cast<double>(bytes);
    ProbeRecord r = MakeRecord("all_reduce", "bf16", {{"bytes", bytes}, {"ranks", count}}, samples, inner, 0.0,
                               bus_bytes, RateUnit::kBytesPerS);
    r.note = "ncclAllReduce sum, one process, host wall clock; rate is bus bandwidth";
    emit(std::move(r));
  }
  for (int i = 0; i < count; ++i) {
    cudaSetDevice(i);
    cudaStreamDestroy(streams[i]);
    cudaFree(bufs[i]);
    ncclCommDestroy(comms[i]);
  }
  Check(cudaSetDevice(o.device), "cudaSetDevice");
#endif
}

// ---------------------------------------------------------------------------

int Main(int argc, char** argv) {
  Options o;
  bool help = false;
  if (const std::string error = ParseArgs(argc, argv, &o, &help); !error.empty()) {
    std::fprintf(stderr, "orrery_cuda_probe: %s\n%s", error.c_str(), kUsage);
    return 2;
  }
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::string command_line = argv[0];
  for (int i = 1; i < argc; ++i) command_line += std::string(" ") + argv[i];

  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "orrery_cuda_probe: no CUDA device available\n");
    return 1;
  }
  if (o.device >= count) {
    std::fprintf(stderr, "orrery_cuda_probe: --device %d, but only %d device(s) visible\n", o.device, count);
    return 2;
  }
  DeviceInfo d;
  d.ordinal = o.device;
  std::vector<ProbeRecord> records;
  ProbeHeader header;
  auto write = [&]() {
    std::string error;
    if (!WriteProbeJson(o.out, header, records, &error)) {
      std::fprintf(stderr, "orrery_cuda_probe: %s\n", error.c_str());
      return false;
    }
    return true;
  };
  auto emit = [&](ProbeRecord r) {
    std::string shape;
    for (const auto& [key, value] : r.shape) shape += (shape.empty() ? "" : " ") + key + "=" + std::to_string(value);
    const double scale = r.rate_unit == "flop/s" ? 1e-12 : 1e-9;
    std::fprintf(stderr, "  %-10s %-8s %-30s median %10.3e s  p10 %10.3e  p90 %10.3e  %9.2f %s\n", r.kind.c_str(),
                 r.dtype.c_str(), shape.c_str(), r.median_s, r.p10_s, r.p90_s, r.rate * scale,
                 r.rate_unit == "flop/s" ? "TFLOP/s" : "GB/s");
    records.push_back(std::move(r));
  };
  try {
    Check(cudaSetDevice(o.device), "cudaSetDevice");
    Check(cudaGetDeviceProperties(&d.prop, o.device), "cudaGetDeviceProperties");
    d.sm_clock_khz = Attribute(cudaDevAttrClockRate, o.device);
    d.mem_clock_khz = Attribute(cudaDevAttrMemoryClockRate, o.device);
    d.mem_bus_bits = Attribute(cudaDevAttrGlobalMemoryBusWidth, o.device);
    header = MakeHeader(o, d, command_line);
    std::fprintf(stderr, "orrery_cuda_probe: %s mode on %s (cc %d.%d, %d SMs)\n", header.mode.c_str(), d.prop.name,
                 d.prop.major, d.prop.minor, d.prop.multiProcessorCount);
    GpuTimer timer;
    cublasLtHandle_t lt = nullptr;
    Check(cublasLtCreate(&lt), "cublasLtCreate");
    struct LtHandle {
      cublasLtHandle_t h;
      ~LtHandle() { cublasLtDestroy(h); }
    } lt_owner{lt};
    const bool fp8_ok = d.prop.major > 8 || (d.prop.major == 8 && d.prop.minor >= 9);
    if (!fp8_ok && Contains(o.dtypes, "fp8_e4m3")) {
      std::fprintf(stderr, "  fp8_e4m3 needs compute capability 8.9 or newer; dropped\n");
      o.dtypes.erase(std::remove(o.dtypes.begin(), o.dtypes.end(), "fp8_e4m3"), o.dtypes.end());
    }
    for (const std::string& section : o.sections) {
      std::fprintf(stderr, "section %s\n", section.c_str());
      SpinUp(d, 0.3, timer.stream());
      if (section == "gemm") RunGemms(o, d, lt, timer, emit);
      if (section == "copy") RunCopies(o, timer, emit);
      if (section == "elementwise") RunElementwise(o, d, timer, emit);
      if (section == "collectives") RunCollectives(o, emit);
      if (o.out != "-" && !write()) return 1;
    }
  } catch (const CudaFailure& e) {
    std::fprintf(stderr, "orrery_cuda_probe: %s\n", e.what());
    if (o.out != "-") write();
    return 1;
  }
  if (o.out == "-" && !write()) return 1;
  return 0;
}

}  // namespace
}  // namespace orrery::calibration

int main(int argc, char** argv) { return orrery::calibration::Main(argc, argv); }
