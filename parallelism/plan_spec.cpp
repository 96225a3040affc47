#include "parallelism/plan_spec.h"

#include <algorithm>
#include <sstream>
#include <vector>

namespace orrery::parallelism {

using base::Dimension;

const char* CpSchemeName(CpScheme s) {
  switch (s) {
    case CpScheme::kAuto: return "auto";
    case CpScheme::kRing: return "ring";
    case CpScheme::kAllGather: return "allgather";
    case CpScheme::kUlysses: return "ulysses";
  }
  return "?";
}

const base::Schema<TrainingPlan>& TrainingPlanSchema() {
  static const base::Schema<TrainingPlan> schema = [] {
    base::Schema<TrainingPlan> s("training", "A training plan: how one iteration is split.");
    s.Int("tp", &TrainingPlan::tp, 1, 1e6, "1", "Tensor-parallel degree (Megatron column/row split).")
        .Int("pp", &TrainingPlan::pp, 1, 1e6, "1", "Pipeline-parallel stages.")
        .Int("dp", &TrainingPlan::dp, 0, 1e9, "0",
             "Data-parallel degree; 0 = devices / (tp * pp * cp).")
        .Int("cp", &TrainingPlan::cp, 1, 1e6, "1",
             "Context-parallel degree: the sequence split over cp devices; how keys and values "
             "travel is cp_scheme.")
        .Enum<CpScheme>("cp_scheme", &TrainingPlan::cp_scheme,
                        {{"auto", CpScheme::kAuto},
                         {"ring", CpScheme::kRing},
                         {"allgather", CpScheme::kAllGather},
                         {"ulysses", CpScheme::kUlysses}},
                        "auto",
                        "Context parallelism: ring (K/V blocks passed around the cp ring, "
                        "overlapped with attention; Liu et al. 2023), allgather (all-gather K/V "
                        "before attention, as Llama 3 trained at 128K), ulysses (all-to-all that "
                        "scatters heads, DeepSpeed-Ulysses; needs heads/tp divisible by cp), or "
                        "auto: the scheme with the least exposed communication for the plan.")
        .Int("ep", &TrainingPlan::ep, 1, 1e6, "1",
             "Expert-parallel degree for MoE layers. With etp it folds over the pipeline "
             "stage's tp x cp x dp devices: ep x etp must divide them (MoE parallel folding, "
             "arXiv 2504.14960).")
        .Int("etp", &TrainingPlan::etp, 0, 1e6, "0",
             "Expert tensor parallelism: each routed expert's matrices split over etp devices, "
             "independent of the attention's tp; 0 = tp (Megatron-Core's default, where ep must "
             "divide dp x cp). etp = 1 with tp > 1 lets ep take the tp devices too.")
        .Real("expert_imbalance", &TrainingPlan::expert_imbalance, 0, 100, "0.04",
              "MoE load imbalance: tokens on the busiest expert-parallel rank over the balanced "
              "share, minus one; that rank paces every MoE layer. Default 0.04: the global "
              "maximal violation of auxiliary-loss-free balancing (Wang et al. 2024, arXiv "
              "2408.15664, as used by DeepSeek-V3).")
        .Bool("ep_comm_overlap", &TrainingPlan::ep_comm_overlap, "false",
              "Overlap each MoE layer's dispatch and combine all-to-alls with the computation of "
              "another microbatch (DeepSeek-V3's DualPipe, Sec. 3.2.1; Megatron-Core "
              "--overlap-moe-expert-parallel-comm): only the part longer than the layer's forward "
              "and backward compute stays exposed.")
        .Real("expert_capacity_factor", &TrainingPlan::expert_capacity_factor, 0, 1000, "0",
              "MoE expert capacity factor C: an expert takes at most C times its balanced share "
              "of tokens and drops the rest (GShard); 0 = dropless.")
        .Quantity("host_kernel_launch", &TrainingPlan::host_kernel_launch, Dimension::kTime, 0, 1, "0 s",
                  "Host time to launch one kernel (framework dispatch and the CUDA launch; one "
                  "torch.nn.Linear forward: 13.48 us on an H100 DGX's Xeon, 37.08 us on GB200's "
                  "Grace, TransformerEngine issue 2053). Priced only for dropless MoE layers "
                  "(expert_capacity_factor 0): their dispatcher copies the tokens per expert to "
                  "the host every layer, so the device waits for the host to launch the layer's "
                  "kernels: the backward takes max(device time, kernels x host_kernel_launch), the "
                  "forward also at least the host time of the kernels after the copy plus the "
                  "device time of those before it. 0 = the host keeps ahead. A system preset's "
                  "system.host.op_launch_time is that host's eager-operator figure; the plan does "
                  "not take it unless set (docs/moe-long-context.md).")
        .Quantity("host_te_module", &TrainingPlan::host_te_module, Dimension::kTime, 0, 1, "0 s",
                  "Host time of one Transformer Engine linear module's forward call (Linear, "
                  "LayerNormLinear, GroupedLinear: Python and C++ dispatch, FP8 quantizer "
                  "bookkeeping and the launches of its own GEMMs and casts). Priced with "
                  "host_kernel_launch, for dropless MoE layers only: each linear GEMM but the "
                  "router's is one module call in place of its kernels' launches. Published "
                  "figures: 115 us BF16 (TransformerEngine PR 1191), more than twice that under "
                  "FP8 delayed scaling (TransformerEngine issue 761). 0 = the module's kernels "
                  "at host_kernel_launch each.")
        .Quantity("host_te_split", &TrainingPlan::host_te_split, Dimension::kTime, 0, 1, "0 s",
                  "Host time a Transformer Engine GroupedLinear forward spends per split (one per "
                  "local expert: the split's tensor views and, under FP8, its quantized "
                  "buffers; TransformerEngine issue 1499, about 5 us per tensor created, PR 865). "
                  "Priced with host_kernel_launch, for dropless MoE layers only. 0 = none.")
        .Bool("sequence_parallel", &TrainingPlan::sequence_parallel, "false",
              "Megatron sequence parallelism: norms and dropout split over tp; all-reduce "
              "becomes reduce-scatter + all-gather (Korthikanti et al. 2022).")
        .Bool("sp_input_regather", &TrainingPlan::sp_input_regather, "true",
              "Under sequence_parallel, each column-parallel layer (QKV, MLP up) keeps only its shard "
              "of the input and all-gathers it again in the backward for its weight gradient "
              "(Korthikanti et al. 2022 Sec. 4.2.2; Megatron-LM's ColumnParallelLinear, Transformer "
              "Engine's LayerNormLinear / LayerNormMLP): two more all-gathers a dense layer, one a "
              "MoE layer. false: the gathered input is kept for the backward, no second gather "
              "(PyTorch DTensor's PrepareModuleInput + ColwiseParallel, torchtitan's tensor "
              "parallelism); time only, the activation memory is counted as Megatron keeps it.")
        .Int("interleave", &TrainingPlan::interleave, 1, 1024, "1",
             "Model chunks per device (v); > 1 selects interleaved 1F1B.")
        .Int("first_stage_layers", &TrainingPlan::first_stage_layers, 0, 1e5, "0",
             "Layers on the first pipeline stage (it also runs the embedding); 0 = even "
             "split. The middle stages share what the first and last leave.")
        .Int("last_stage_layers", &TrainingPlan::last_stage_layers, 0, 1e5, "0",
             "Layers on the last pipeline stage (it also runs the LM head and loss); 0 = even "
             "split.")
        .Bool("pipeline_split_embedding_loss", &TrainingPlan::pipeline_split_embedding_loss, "false",
              "Count the embedding and the loss as one layer each when splitting the layers over "
              "pipeline stages (Megatron-Core --account-for-embedding-in-pipeline-split and "
              "--account-for-loss-in-pipeline-split): with L layers over pp stages the first and "
              "last stages take ceil((L + 2) / pp) - 1 layers unless first/last_stage_layers say "
              "otherwise, and pp x interleave may be up to L + 2 (Llama 3.1 405B's 126 layers as "
              "pp 16 x interleave 8).")
        .Enum<Schedule>("schedule", &TrainingPlan::schedule,
                        {{"1f1b", Schedule::kOneFOneB},
                         {"interleaved", Schedule::kInterleaved},
                         {"gpipe", Schedule::kGpipe},
                         {"zb-h1", Schedule::kZeroBubbleH1},
                         {"v-min", Schedule::kVMin},
                         {"v-half", Schedule::kVHalf},
                         {"v-zb", Schedule::kVZeroBubble},
                         {"dualpipe", Schedule::kDualPipe}},
                        "1f1b",
                        "Pipeline schedule: 1f1b, interleaved (with interleave > 1), gpipe; zb-h1 "
                        "(backward split into input and weight gradients, Qi et al. 2024) and "
                        "v-min, v-half, v-zb (V-shape with 1/3, 1/2 or all of 1F1B's activation "
                        "memory, Qi et al. NeurIPS 2024; need interleave 2) are simulated by "
                        "`orrery estimate --engine event`; the closed form prices gpipe, 1f1b and zb-h1 "
                        "(with its B/W split) as the event engine does, refuses interleaved 1F1B "
                        "unless the microbatches are a multiple of pp, and prices the V-shapes as "
                        "interleaved with v = 2. dualpipe: DeepSeek-V3's bidirectional pipeline "
                        "(Sec. 3.2.1): half the microbatches enter at each end, every device holds "
                        "its stage and the mirror stage (2x the weights), the expert all-to-alls "
                        "hide under the paired chunk's compute (as ep_comm_overlap), bubble "
                        "(pp/2 - 1)(F&B + B - 3W), pp + 1 microbatches of activations; needs an "
                        "even pp and an even microbatch count of at least 2 pp; both engines.")
        .Int("straggler_stage", &TrainingPlan::straggler_stage, -1, 1e6, "-1",
             "Pipeline stage whose devices run slower than the rest (a straggler); -1 = none. "
             "Seen by the event engine only.")
        .Real("straggler_slowdown", &TrainingPlan::straggler_slowdown, 1, 1000, "1",
              "Factor on the compute time of the straggler stage (1.2 = 20 % slower). Seen by the "
              "event engine only.")
        .Int("micro_batch", &TrainingPlan::micro_batch, 1, 1e6, "1", "Sequences per microbatch.")
        .Enum<Recompute>("recompute", &TrainingPlan::recompute,
                         {{"none", Recompute::kNone},
                          {"selective", Recompute::kSelective},
                          {"full", Recompute::kFull},
                          {"op", Recompute::kOp}},
                         "none",
                         "Activation recomputation: none, selective (attention core), full "
                         "(every layer's forward, or every recompute_interval-th layer's) or op "
                         "(torchtitan's op-level selective activation checkpointing, "
                         "activation_checkpoint.mode = \"selective\", selective_ac_option = "
                         "\"op\": every layer keeps the outputs of its matmuls but each second one "
                         "(in Llama wq, wv, w1, w2 kept; wk, wo, w3 recomputed), of its attention "
                         "kernel and of its reduce-scatters, and recomputes the norms, rotary, "
                         "SwiGLU, residual adds and the unsaved matmuls in the backward pass; "
                         "search tries it only when it is set).")
        .Int("recompute_interval", &TrainingPlan::recompute_interval, 1, 1e6, "1",
             "With recompute full, recompute every N-th transformer layer and keep all the "
             "activations of the others (torchtitan activation_checkpoint.mode = \"selective\", "
             "selective_ac_option = \"N\"): 1/N of each stage's layers run their forward again "
             "and keep only their input, the rest keep everything. 1 = every layer (Megatron's "
             "full recompute). Read only with recompute full.")
        .Bool("checkpoint_early_stop", &TrainingPlan::checkpoint_early_stop, "false",
              "With recompute full, each recomputed layer's forward stops as soon as every tensor "
              "its backward needs is back, as PyTorch's non-reentrant torch.utils.checkpoint does "
              "by default from PyTorch 2.1 (torchtitan, FSDP checkpoint_wrapper, "
              "use_reentrant=False): the operators after the layer's last saved tensor do not run "
              "again, the closing residual add and, when no dropout follows it and it is not an "
              "FP8 layer, the MLP's down projection with its tensor-parallel reduction. false: "
              "the whole forward runs again (Megatron's reentrant CheckpointFunction; PyTorch "
              "2.0 and before). Read only with recompute full.")
        .Int("offload_activation_layers", &TrainingPlan::offload_activation_layers, 0, 1e6, "0",
             "Transformer layers per pipeline stage whose saved activations are copied to host "
             "memory after their forward and back before their backward (Megatron-Core "
             "--cpu-offloading --cpu-offloading-num-layers N, activations only). The first N "
             "layers of the stage leave device memory; each copy crosses the host link "
             "(system.host_bandwidth) on a copy engine beside the next layer's compute and adds "
             "only what that compute does not cover. Must be below the stage's layer count (the "
             "last layer stays); needs system.host_bandwidth. 0 = none.")
        .Bool("recompute_mla_up_proj", &TrainingPlan::recompute_mla_up_proj, "false",
              "Recompute the multi-head latent attention's up projections (and RoPE) in the "
              "backward pass instead of keeping the per-head queries, keys and values "
              "(Megatron-Core --recompute-modules mla_up_proj): saves their activation memory "
              "for the up-projection GEMMs run once more. Only for MLA models (kv_lora_rank "
              "> 0); with recompute full it changes nothing.")
        .Bool("recompute_mlp", &TrainingPlan::recompute_mlp, "false",
              "Recompute each dense layer's MLP block (its norm, up projection, activation and "
              "down projection) in the backward pass, keeping only the block's input "
              "(Megatron-Core --recompute-modules mlp): saves the block's activations for its "
              "forward run once more. MoE layers are not touched. Read with recompute none or "
              "selective; with full or op it changes nothing.")
        .Bool("recompute_layernorm", &TrainingPlan::recompute_layernorm, "false",
              "Recompute the norms that are modules of their own (a MoE layer's pre-MLP norm, "
              "whose output the router reads; the input norm of multi-head latent attention) "
              "in the backward pass instead of keeping their bf16 outputs (Megatron-Core "
              "--recompute-modules layernorm). Norms fused into their first linear are not "
              "touched, nor the FP8 copies Transformer Engine's linears keep of their inputs. "
              "Read with recompute none or selective.")
        .Bool("recompute_moe_act", &TrainingPlan::recompute_moe_act, "false",
              "Recompute the routed experts' activation (SwiGLU or GeLU) in the backward pass "
              "instead of keeping its output, the down projection's input (Megatron-Core "
              "--recompute-modules moe_act). In bf16 it saves that product for every routed "
              "copy of a token; in FP8 the down projection keeps its own FP8 copy and nothing "
              "is saved. Read with recompute none or selective.")
        .Enum<Attention>("attention", &TrainingPlan::attention,
                         {{"flash", Attention::kFlash},
                          {"flash2", Attention::kFlash2},
                          {"triton", Attention::kTriton},
                          {"materialized", Attention::kMaterialized}},
                         "flash",
                         "Attention kernel: fused attention (no s^2 memory traffic) at the device's "
                         "flash_attention_* efficiencies (cuDNN / FlashAttention-3 class, what "
                         "Megatron-Core and NeMo run), flash2 for the FlashAttention-2 kernels of the "
                         "flash-attn package and PyTorch SDPA (llm-foundry, torchtitan) at the device's "
                         "flash2_attention_* efficiencies, triton for the Triton FlashAttention kernel "
                         "(llm-foundry attn_impl: triton) at those efficiencies / 1.4 forward and / 2 "
                         "backward (Dao 2023, Sec. 4.1), or materialised softmax.")
        .Enum<Elementwise>("elementwise", &TrainingPlan::elementwise,
                           {{"fused", Elementwise::kFused}, {"eager", Elementwise::kEager}},
                           "fused",
                           "Memory-bound operators around the GEMMs: fused (one kernel per norm, "
                           "activation and residual, as Megatron-Core, Transformer Engine or "
                           "torch.compile run them) or eager (PyTorch eager mode, each tensor "
                           "operation its own kernel: an RMSNorm upcast to fp32 is six passes over "
                           "the activations, rotary embedding five, a gated activation two; "
                           "litgpt). An eager RMSNorm moves ten times the bytes of a fused one; "
                           "torch.nn.LayerNorm is one kernel either way.")
        .Enum<LossKernel>("loss_kernel", &TrainingPlan::loss_kernel,
                          {{"megatron_fp32", LossKernel::kMegatronFp32},
                           {"torch_fp32", LossKernel::kTorchFp32},
                           {"fused_bf16", LossKernel::kFusedBf16}},
                          "megatron_fp32",
                          "Kernels of the training loss over the logits: megatron_fp32 (Megatron-Core's "
                          "unfused vocabulary-parallel cross entropy, logits upcast to fp32, 52 B per "
                          "logit forward and backward), torch_fp32 (PyTorch F.cross_entropy on logits "
                          "upcast to fp32: torchtitan, or autocast as litgpt's bf16-mixed runs it; "
                          "36 B per logit) or fused_bf16 (one fused kernel each way on the bf16 logits, "
                          "flash-attn's cross entropy as llm-foundry's fused_crossentropy calls it; "
                          "6 B per logit). docs/loss-path.md.")
        .Int("zero", &TrainingPlan::zero, 0, 3, "0",
             "ZeRO stage: 1 shards optimizer states, 2 also gradients, 3 (FSDP) also weights.")
        .Bool("dp_overlap", &TrainingPlan::dp_overlap, "true",
              "Overlap the data-parallel gradient reduction with the backward pass.")
        .Enum<DpCollective>("dp_collective", &TrainingPlan::dp_collective,
                            {{"hierarchical", DpCollective::kHierarchical},
                             {"flat", DpCollective::kFlat}},
                            "hierarchical",
                            "Data-parallel and ZeRO collectives: hierarchical (inside the node and "
                            "across, pipelined, as NCCL runs them) or a flat ring whose whole volume "
                            "crosses each device's scale-out link (non-topology-aware implementations).")
        .Bool("zero3_recompute_gather", &TrainingPlan::zero3_recompute_gather, "true",
              "ZeRO-3 with full recompute: gather each layer's weights a third time for its "
              "recomputed forward (DeepSpeed, whose checkpointing re-runs the layer and its "
              "parameter fetch). false: the recomputation runs inside the layer's backward, on "
              "the weights its backward gathered (PyTorch FSDP with the checkpoint wrapper inside "
              "each FSDP unit: llm-foundry/Composer, torchtitan).")
        .Bool("grad_reduce_fp32", &TrainingPlan::grad_reduce_fp32, "true",
              "ZeRO-0/1/2: keep the gradient buffer and reduce it over data parallelism in fp32 "
              "(Megatron-LM forces it for bf16; Megatron-Core's default) instead of the weights' "
              "datatype (false: grad_reduce_in_fp32 = False, as Megatron-Bridge's performance recipes "
              "set it). Moves the reduction's bytes and the buffer's memory; "
              "fp16 training keeps fp16 gradients either way.")
        .Bool("zero3_fp32_reduce", &TrainingPlan::zero3_fp32_reduce, "false",
              "ZeRO-3: reduce-scatter gradients in fp32 (PyTorch FSDP mixed precision with "
              "reduce_dtype float32: Composer's DEFAULT, torchtitan's default) instead of the "
              "weights' datatype; twice the bytes in bf16.")
        .Bool("zero3_backward_prefetch", &TrainingPlan::zero3_backward_prefetch, "true",
              "ZeRO-3 with overlap: gather each layer's weights for its backward while the layer "
              "after it still runs its backward (PyTorch FSDP BACKWARD_PRE, FSDP2, DeepSpeed). "
              "false: the gather is issued from the later layer's post-backward hook, once its "
              "gradients exist, and waits exposed (PyTorch FSDP1 BACKWARD_POST, the default of "
              "Composer, llm-foundry's trainer).")
        .Bool("zero3_matrix_prefetch", &TrainingPlan::zero3_matrix_prefetch, "false",
              "ZeRO-3 with overlap: weights are fetched one matrix at a time, each fetch blocking, "
              "with only the next matrix prefetched (DeepSpeed ZeRO-3 of 2021: prefetch only when "
              "nothing is in flight, stage3_prefetch_bucket_size 5e7 elements), so a matrix's gather "
              "hides only behind the matrix before it. false: whole layers are gathered one ahead "
              "(PyTorch FSDP, FSDP2).")
        .Bool("zero3_copy_out", &TrainingPlan::zero3_copy_out, "false",
              "ZeRO-3: after each all-gather, copy the gathered weights out of the flat "
              "all-gather buffer into each parameter's own tensor on the compute stream, "
              "reading and writing every gathered byte once before the layer's forward and "
              "before its backward (PyTorch FSDP2, fully_shard: foreach_all_gather_copy_out, "
              "torchtitan). false: the gather writes the weights in place (FSDP1's "
              "FlatParameter, DeepSpeed).")
        .Bool("zero3_flat_grad", &TrainingPlan::zero3_flat_grad, "false",
              "ZeRO-3: every microbatch's backward concatenates each unit's parameter gradients into "
              "the unit's flat gradient on the compute stream, reading and writing each gradient once "
              "in the weights' datatype (PyTorch FSDP1: a module's parameters are views split off the "
              "FlatParameter, torch/distributed/fsdp/_flat_param.py _get_unflat_views, and the split's "
              "backward is a concatenation, tools/autograd/derivatives.yaml split_with_sizes; "
              "llm-foundry's Composer). false: each gradient is reduced from its own tensor, or copied "
              "on the reduction's stream beside the compute (FSDP2, DeepSpeed).")
        .Bool("tp_comm_overlap", &TrainingPlan::tp_comm_overlap, "false",
              "Overlap tensor-parallel collectives with GEMMs (Megatron-Core --tp-comm-overlap, "
              "Transformer Engine's userbuffers; inside the scale-up domain only). Each collective hides "
              "behind the one GEMM of its own block it is paired with, never another block's: the input's "
              "all-gather beside the QKV or MLP up projection, the output's reduce-scatter beside the "
              "output or down projection, split in 4 chunks (one a rank under fp8) whose last stays "
              "exposed; backward, the gathers beside the input-gradient GEMMs and the reduce-scatter "
              "beside the weight gradient. What outlasts its GEMM is exposed, and the GEMMs beside a "
              "collective run slower by the device's overlap_slowdown. Without sequence_parallel the "
              "forward all-reduces stay exposed.")
        .Bool("pp_comm_overlap", &TrainingPlan::pp_comm_overlap, "false",
              "With an interleaved pipeline (interleave > 1), run each send and receive between "
              "stages beside the computation of another model chunk in the steady one-forward-"
              "one-backward phase, exposing only what outlasts that chunk and the compute's "
              "slowdown beside it; the first device's warm-up and flush sends stay exposed "
              "(Megatron-Core overlap_p2p_comm, which NeMo's and Megatron-Bridge's communication-"
              "overlap configs turn on whenever the pipeline is interleaved; NeMo docs, "
              "communication_overlap.rst). false (the default): every send on the critical path "
              "is paid in full (batch_p2p_comm), which is how the measured NeMo and "
              "Megatron-Bridge interleaved runs read (validation/README.md). Read only for "
              "interleaved 1F1B.")
        .Quantity("dp_bucket", &TrainingPlan::dp_bucket, Dimension::kBytes, 0, 1e12, "100 MB",
                  "Gradient bucket size for the overlapped reduction.", true)
        .Enum<hardware::DataType>("precision", &TrainingPlan::precision,
                                  {{"bf16", hardware::DataType::kBf16},
                                   {"fp16", hardware::DataType::kFp16},
                                   {"fp8", hardware::DataType::kFp8},
                                   {"fp32", hardware::DataType::kFp32},
                                   {"tf32", hardware::DataType::kTf32}},
                                  "bf16",
                                  "Datatype of the layers' GEMMs and activations. fp8: Transformer Engine's "
                                  "FP8 linear layers: each casts its input and its output gradient "
                                  "(4 B per element, 3 B where FP8 GEMMs take any layout (Blackwell), more by fp8_recipe) "
                                  "and keeps its input for the backward pass in 1 byte; "
                                  "attention, LM head and loss stay bf16.")
        .Enum<Fp8Recipe>("fp8_recipe", &TrainingPlan::fp8_recipe,
                         {{"delayed", Fp8Recipe::kDelayed},
                          {"current", Fp8Recipe::kCurrent},
                          {"blockwise", Fp8Recipe::kBlockwise},
                          {"mxfp8", Fp8Recipe::kMxfp8},
                          {"nvfp4", Fp8Recipe::kNvfp4}},
                         "delayed",
                         "How fp8 GEMM operands are scaled (read only with precision fp8). delayed: one scale per "
                         "tensor from an amax history (Transformer Engine DelayedScaling), the amax reduced "
                         "inside the cast-transpose, 4 B per element (3 B on Blackwell, whose FP8 GEMMs take "
                         "any layout: no transposed copy); the default, as TE's default recipe on "
                         "Hopper and what Megatron-Core and NeMo ran before current scaling (2025). current: "
                         "the scale from the tensor's own amax (Float8CurrentScaling), one more 2 B read per "
                         "element in a kernel of its own (its amax all-reduce over tp before a sequence-parallel "
                         "gather: fp8_tp_gather). blockwise: one fp32 scale per 1x128 block of each layout "
                         "(DeepSeek-V3 Sec. 3.3), 4 + 8/128 B. mxfp8: one E8M0 scale per 32 elements of each "
                         "layout (OCP MX v1.0), both MX copies on every device, 4 + 2/32 B, and a kernel swizzling "
                         "each operand's scales before every GEMM (six a layer); only on block-scaled tensor "
                         "cores (a device with peak_fp4: b200, gb200). nvfp4: Transformer Engine's NVFP4BlockScaling, "
                         "the linear layers' GEMMs in FP4 (E2M1) at the device's FP4 rate, one E4M3 scale per 16 "
                         "elements of each layout and a per-tensor amax (its own kernel, 2 B read), the wgrad "
                         "copies through a random Hadamard transform fused in the quantize kernel: 2 + 2 x (0.5 + "
                         "1/16) B, and the scales swizzled before every GEMM as MXFP8's; attention, LM head and "
                         "router stay bf16, and the linear inputs kept for the backward in their column-wise NVFP4 copy, "
                         "0.5 + 1/16 B an element; "
                         "block-scaled tensor cores only.")
        .Bool("fp8_param_gather", &TrainingPlan::fp8_param_gather, "false",
              "Keep the weights in FP8 and all-gather the updated weights after the optimizer step in "
              "FP8, 1 B per parameter instead of 2 (Megatron-Core --fp8-param-gather; NeMo 2's "
              "bf16_with_fp8_mixed sets fp8_params / fp8_param_gather). Read only with precision fp8 "
              "and ZeRO-1/2 (the distributed optimizer); the gradient reduction and the memory model "
              "are unchanged.")
        .Enum<Fp8TpGather>("fp8_tp_gather", &TrainingPlan::fp8_tp_gather,
                           {{"all", Fp8TpGather::kAll}, {"input", Fp8TpGather::kInput}, {"none", Fp8TpGather::kNone}},
                           "all",
                           "Which tensor-parallel all-gathers of a sequence-parallel layer move the activations "
                           "quantized, 1 B an element instead of 2, under fp8_recipe delayed or current. all: "
                           "Transformer Engine's linear modules quantize before they gather (transformer_engine/"
                           "pytorch/module/layernorm_linear.py and layernorm_mlp.py, gather_along_first_dim with the "
                           "input quantizer; the backward's re-gather of the saved FP8 input; base.py "
                           "grad_output_preprocess, the output gradient quantized, then gathered; the userbuffers "
                           "paths the same): a dense layer's two input gathers, two re-gathers and two "
                           "output-gradient gathers, a MoE layer's attention block's. input: the forward inputs "
                           "only (torchao's Float8ColwiseParallel / PrepareFloat8ModuleInput, as torchtitan runs "
                           "float8 tensor parallelism; its gradients gather in bf16). none: every gather in bf16. "
                           "Under current scaling each quantized gather first all-reduces the tensor's amax over "
                           "the tp group (TE sets with_amax_reduction on a sequence-parallel module's quantizer; "
                           "a DTensor's amax in torchao), one 4-byte all-reduce, exposed. Block-scaled recipes "
                           "(blockwise, mxfp8, nvfp4) gather in bf16 here. Read only with precision fp8, "
                           "sequence_parallel and tp > 1.")
        .Bool("fp32_master_weights", &TrainingPlan::fp32_master_weights, "true",
              "Keep fp32 master weights (mixed precision, Micikevicius et al. 2018).")
        .Bool("grad_accumulation_fusion", &TrainingPlan::grad_accumulation_fusion, "true",
              "Accumulate each weight gradient into the gradient buffer inside its weight-gradient GEMM "
              "(Megatron-LM --gradient-accumulation-fusion, apex fused_weight_gradient_mlp_cuda, 2022 on, "
              "default on; Megatron-Core; Transformer Engine). false: the backward writes each weight "
              "gradient as a tensor of its own in the weights' datatype and a hook adds it into the buffer "
              "(param.main_grad.add_, Megatron-LM of 2021-2022: megatron/mpu/layers.py at 02bb1f5c), one "
              "memory-bound pass per microbatch over every parameter the device holds, reading w + g and "
              "writing g bytes (10 in bf16 with fp32 gradients). ZeRO-3 keeps no buffer: nothing either way.")
        .Bool("autocast_fp32_weights", &TrainingPlan::autocast_fp32_weights, "false",
              "Parameters kept in fp32 and cast to the compute datatype by torch.autocast at each use "
              "(PyTorch automatic mixed precision on fp32 parameters: a plain PyTorch loop, Lightning's "
              "bf16-mixed). Every microbatch's forward casts each weight (reads 4, writes 2 bytes a "
              "parameter), its backward casts each weight gradient to fp32 (reads 2, writes 4) and adds it "
              "into the fp32 .grad (reads 8, writes 4): 24 bytes a parameter a microbatch, priced as one "
              "memory-bound pass with the backward, the gradient's cast (PyTorch's non-vectorized "
              "dtype-converting kernel) at the device's unvectorized_element_rate where it has one and "
              "training.elementwise is eager "
              "(validation/gpu_step/README.md measures them). Replaces "
              "grad_accumulation_fusion's accounting; ZeRO-3 / FSDP casts in its gathers instead: nothing.")
        .Bool("grad_scale_at_dp1", &TrainingPlan::grad_scale_at_dp1, "false",
              "Divide the gradient buffer by the data-parallel size every step even when that is 1 "
              "(Megatron-LM 2021-2023, allreduce_gradients: buffer_.data /= data-parallel world size, "
              "megatron/model/distributed.py at 01d65bde), reading and writing it once more, 2 g bytes a "
              "parameter. false: scaled only when the gradients are reduced over more than one device "
              "(Megatron-Core). ZeRO-3 keeps no buffer: nothing either way.")
        .Bool("grad_nan_check", &TrainingPlan::grad_nan_check, "false",
              "Take the L2 norm of every gradient bucket before its data-parallel reduction to catch a NaN "
              "(Megatron-Core DistributedDataParallelConfig.check_for_nan_in_grad, which Megatron-LM sets from "
              "--check-for-nan-in-loss-and-grad, on unless --no-check-for-nan-in-loss-and-grad: "
              "megatron/training/training.py get_model; the norm is grad_data.norm(p=2) per bucket in "
              "megatron/core/distributed/param_and_grad_buffer.py, start_grad_sync / check_grads at "
              "00119989), reading the whole gradient buffer once more every step, g bytes a parameter. "
              "ZeRO-3 keeps no buffer: nothing either way.")
        .Bool("separate_bias_grad", &TrainingPlan::separate_bias_grad, "false",
              "Compute each biased linear layer's bias gradient in a reduction kernel of its own, one more "
              "read of the layer's output gradient per microbatch in the backward (PyTorch autograd: "
              "F.linear's addmm gradient summed to the bias's shape, tools/autograd/derivatives.yaml; "
              "Megatron-LM's own layers: grad_bias = grad_output.sum(dim=0), and the bias gradients of its "
              "fused bias-GeLU and bias-dropout-add reduced by autograd), as llm-foundry, DeepSpeed and "
              "Megatron-LM before Transformer Engine run. false: in the weight-gradient GEMM's epilogue "
              "(Transformer Engine's Linear backward, cuBLASLt's bias-gradient epilogue; Megatron-Core with "
              "TE, NeMo). Read only for a model with biases (model.bias).")
        .Bool("qkv_split_cat", &TrainingPlan::qkv_split_cat, "false",
              "Split the fused QKV projection's output into queries, keys and values with autograd views, "
              "whose backward concatenates the three gradients into one: a read and a write of the "
              "projection's output gradient per layer and microbatch, 4 x (q + 2 kv) x head_dim / tp bytes "
              "a token in bf16 (PyTorch's split and chunk backward is a cat, tools/autograd/derivatives.yaml; "
              "llm-foundry's MPT qkv.chunk / qkv.split, Megatron-LM's split_tensor_along_last_dim, litgpt's "
              "qkv.split). false: separate Q, K and V projections (torchtitan, Hugging Face Llama) or an "
              "attention kernel that writes one packed gradient. Not read for MLA.")
        .Bool("norm_weight_grad_kernel", &TrainingPlan::norm_weight_grad_kernel, "false",
              "Compute each norm's weight (and bias) gradient in a kernel of its own that reads the output "
              "gradient and the norm's input again, after the kernel that computes the input gradient: 3 + 2 "
              "element accesses and two launches per element of the norm's backward. PyTorch's LayerNorm "
              "backward (aten/src/ATen/native/cuda/layer_norm_kernel.cu: layer_norm_grad_input_kernel, then "
              "GammaBetaBackwardCUDAKernel; llm-foundry's LPLayerNorm, torch.nn.LayerNorm), Megatron's "
              "non-persistent fused LayerNorm (megatron/fused_kernels/layer_norm_cuda_kernel.cu: "
              "cuComputePartGradGammaBeta, then cuComputeGradInput) and torch.compile's generated kernels. "
              "false: one pass that reads the output gradient and the input once, 3 accesses an element, the "
              "weight's gradient summed beside it into per-block partials (Transformer Engine; apex's "
              "persistent FastLayerNorm, NVIDIA/apex PR 1037). Not read for an eager RMSNorm "
              "(training.elementwise: eager), whose passes are priced one by one.")
        .Bool("rope_kernel", &TrainingPlan::rope_kernel, "true",
              "Apply RoPE to the queries and keys in a kernel of its own that reads and writes them, and in "
              "the backward their gradients: 2 element accesses forward and 2 backward per query and key "
              "element (Transformer Engine's FusedRoPEFunc, tex.fused_rope_forward / fused_rope_backward, "
              "which Megatron-Core's apply_rotary_pos_emb calls under apply_rope_fusion, the default of "
              "Megatron-LM's arguments and of the NeMo and Megatron-Bridge recipes). false: inside the "
              "attention or QKV kernel. Read only for a RoPE model without MLA on a fused plan "
              "(training.elementwise: fused); eager code prices its own rotary kernels.")
        .Bool("packed_qkv_copies", &TrainingPlan::packed_qkv_copies, "true",
              "Run the attention on Megatron-Core's packed QKV projection with Transformer Engine's kernels, "
              "which copies: forward, with grouped-query attention, the queries' reshape out of the "
              "[groups, (heads/groups + 2) x head_dim] layout, which cannot be a view "
              "(get_query_key_value_tensors: query.reshape), 2 accesses an element of the queries, and, "
              "where RoPE writes new keys, the values, still strided views of the projection, made "
              "contiguous by TE's layout check (get_qkv_layout: \"not_supported\", then x.contiguous()), 2 "
              "accesses an element of the values, again under selective recompute; backward, with RoPE or "
              "grouped-query attention, TE's SplitAlongDim concatenates the three gradients, which are not "
              "views of one buffer (noop_ok false: torch.cat), 4 x (q + 2 kv) x head_dim / tp bytes a token "
              "in bf16 (as training.qkv_split_cat). Without RoPE and with as many KV heads as query heads "
              "(GPT-3) nothing runs: the attention takes Q, K and V packed and writes one packed gradient. "
              "false: separate Q, K and V projections or a kernel taking them as they are. Read only on a "
              "fused plan without MLA.")
        .Enum<Optimizer>("optimizer", &TrainingPlan::optimizer,
                         {{"adam", Optimizer::kAdam}, {"sgd", Optimizer::kSgd}}, "adam",
                         "Optimizer: adam (two fp32 moments) or sgd with momentum (one).")
        .Enum<hardware::DataType>("optimizer_moments", &TrainingPlan::optimizer_moments,
                                  {{"fp32", hardware::DataType::kFp32}, {"bf16", hardware::DataType::kBf16}},
                                  "fp32",
                                  "Datatype of the optimizer's moments (Adam's two, SGD's momentum): fp32, or "
                                  "bf16 as DeepSeek-V3 keeps AdamW's (arXiv 2412.19437, Sec. 3.3.3, "
                                  "\"Low-Precision Optimizer States\"). Halves their memory (8 -> 4 bytes a "
                                  "parameter for Adam, beside the fp32 master weights) and the bytes the "
                                  "optimizer step moves for them (38 -> 30 a parameter).")
        .Enum<OptimizerStep>("optimizer_step", &TrainingPlan::optimizer_step,
                             {{"fused", OptimizerStep::kFused}, {"pytorch", OptimizerStep::kPytorch}}, "fused",
                             "How the optimizer step runs. fused: one fused update kernel (apex / Transformer "
                             "Engine FusedAdam), the low-precision weights copied from the master in a pass of "
                             "their own, and gradient clipping that reads the norm and rescales only past the "
                             "limit (Megatron-LM, Megatron-Core): 38 B a parameter for Adam. pytorch: PyTorch's "
                             "own step, the update as separate element-wise passes over each parameter "
                             "(torch.optim's foreach path, or a per-parameter loop as Composer's DecoupledAdamW "
                             "runs it: the moments scaled and added into, the square root, the division and the "
                             "epsilon each a pass of their own, then the parameter's addcdiv), and "
                             "torch.nn.utils.clip_grad_norm_ (FSDP's clip_grad_norm_ too), which always "
                             "multiplies the gradients by the clamped coefficient: 92 B a parameter for Adam "
                             "with fp32 states (80 + 12), 44 for SGD with momentum.")
        .Bool("offload_optimizer", &TrainingPlan::offload_optimizer, "false",
              "Keep optimizer states in host memory and run the step there (ZeRO-Offload).")
        .String("group_order", &TrainingPlan::group_order, "tp,cp,ep,dp,pp",
                "Order in which parallel groups are laid on the network, innermost first.");
    return s;
  }();
  return schema;
}

const base::Schema<Workload>& WorkloadSchema() {
  static const base::Schema<Workload> schema = [] {
    base::Schema<Workload> s("workload", "What one training run processes.");
    s.Int("global_batch", &Workload::global_batch, 1, 1e9, "", "Sequences per iteration.")
        .Int("seq_len", &Workload::seq_len, 1, 1e9, "", "Tokens per sequence.")
        .Real("train_tokens", &Workload::train_tokens, 0, 1e18, "0",
              "Tokens of the whole run, for days and GPU-hours (0 = not asked).");
    return s;
  }();
  return schema;
}

bool IsGroupOrder(const std::string& order) {
  std::vector<std::string> parts;
  std::stringstream ss(order);
  for (std::string part; std::getline(ss, part, ',');) parts.push_back(part);
  std::sort(parts.begin(), parts.end());
  return parts == std::vector<std::string>{"cp", "dp", "ep", "pp", "tp"};
}

}  // namespace orrery::parallelism
