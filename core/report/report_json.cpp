// The report model as JSON: every number the document shows, under the
// names of report.h. The HTML page draws its charts from this same text.

#include <nlohmann/json.hpp>

#include "core/report/report.h"

namespace orrery::report {

namespace {

using Json = nlohmann::ordered_json;

Json PlanJson(const PlanRow& r) {
  Json time = Json::array();
  for (const auto& t : r.time) time.push_back({{"name", t.name}, {"seconds", t.seconds}});
  return {{"label", r.label},
          {"system", r.system},
          {"device", r.device},
          {"gpus", r.gpus},
          {"plan", r.plan},
          {"tp", r.tp},
          {"pp", r.pp},
          {"dp", r.dp},
          {"cp", r.cp},
          {"ep", r.ep},
          {"interleave", r.interleave},
          {"micro_batch", r.micro_batch},
          {"microbatches", r.microbatches},
          {"zero", r.zero},
          {"recompute", r.recompute},
          {"sequence_parallel", r.sequence_parallel},
          {"global_batch", r.global_batch},
          {"seq_len", r.seq_len},
          {"feasible", r.feasible},
          {"reason", r.reason},
          {"iteration_s", r.iteration_s},
          {"mfu", r.mfu},
          {"mfu_causal", r.mfu_causal},
          {"tokens_per_s", r.tokens_per_s},
          {"memory_bytes", r.memory_bytes},
          {"capacity_bytes", r.capacity_bytes},
          {"host_bytes", r.host_bytes},
          {"time", time},
          {"train_tokens", r.train_tokens},
          {"days", r.days},
          {"gpu_hours", r.gpu_hours},
          {"energy_mwh", r.energy_mwh},
          {"cost_usd", r.cost_usd},
          {"goodput", r.goodput},
          {"effective_days", r.effective_days},
          {"checkpoint_interval_s", r.checkpoint_interval_s},
          {"why", r.why}};
}

}  // namespace

std::string ReportJson(const ReportModel& m) {
  Json j;
  j["kind"] = m.kind;
  j["title"] = m.title;
  j["question"] = m.question;
  j["answer"] = m.answer;
  j["feasible"] = m.feasible;
  j["price_per_gpu_hour_usd"] = m.price_per_gpu_hour;
  j["pue"] = m.pue;
  if (m.law) {
    const LawSummary& l = *m.law;
    j["law"] = {{"name", l.name},         {"source", l.source},       {"formula", l.formula},
                {"N", l.params_n},        {"D", l.tokens_d},          {"C", l.compute_flops},
                {"loss", l.loss},         {"model", l.model},         {"has_range", l.has_range},
                {"level", l.level},       {"days_range", {l.days_lo, l.days_hi}},
                {"cost_range_usd", {l.cost_lo, l.cost_hi}}};
  }
  j["plans"] = Json::array();
  for (const auto& p : m.plans) j["plans"].push_back(PlanJson(p));
  j["why_first"] = m.why_first;
  j["search_summary"] = m.search_summary;
  Json bars = Json::array();
  for (const auto& b : m.timeline.bars) bars.push_back({b.row, b.start_s, b.end_s, b.kind});
  j["timeline"] = {{"simulated", m.timeline.simulated},
                   {"note", m.timeline.note},
                   {"schedule", m.timeline.schedule},
                   {"makespan_s", m.timeline.makespan_s},
                   {"closed_form_s", m.timeline.closed_form_s},
                   {"bubble_fraction", m.timeline.bubble_fraction},
                   {"rows", m.timeline.rows},
                   {"bars", bars}};
  Json pts = Json::array();
  for (const auto& p : m.scaling.points)
    pts.push_back({{"gpus", p.gpus},
                   {"feasible", p.feasible},
                   {"reason", p.reason},
                   {"plan", p.plan},
                   {"iteration_s", p.iteration_s},
                   {"days", p.days},
                   {"cost_usd", p.cost_usd},
                   {"mfu", p.mfu},
                   {"comm_fraction", p.comm_fraction}});
  j["scaling"] = {{"points", pts},
                  {"comm_takes_over_gpus", m.scaling.comm_takes_over_gpus},
                  {"note", m.scaling.note}};
  Json rows = Json::array();
  for (const auto& r : m.sensitivity.rows)
    rows.push_back({{"input", r.input}, {"base_value", r.base_value}, {"low_pct", r.low_pct}, {"high_pct", r.high_pct}});
  j["sensitivity"] = {{"metric", m.sensitivity.metric},
                      {"base_value", m.sensitivity.base_value},
                      {"rows", rows},
                      {"notes", m.sensitivity.notes}};
  Json runs = Json::array();
  for (const auto& r : m.confidence.runs)
    runs.push_back({{"model", r.model},
                    {"gpu", r.gpu},
                    {"gpus", r.gpus},
                    {"metric", r.metric},
                    {"measured", r.measured},
                    {"predicted", r.predicted},
                    {"error_pct", r.error_pct},
                    {"speed_error_pct", r.speed_error_pct},
                    {"source", r.source}});
  j["confidence"] = {{"basis", m.confidence.basis},
                     {"statement", m.confidence.statement},
                     {"mean_abs_error_pct", m.confidence.mean_abs_error_pct},
                     {"max_abs_error_pct", m.confidence.max_abs_error_pct},
                     {"device_runs", m.confidence.device_runs},
                     {"device_speed_bias_pct", m.confidence.device_speed_bias_pct},
                     {"runs", runs}};
  if (m.sweep) {
    const SweepSection& sw = *m.sweep;
    Json axes = Json::array();
    for (const auto& a : sw.axes) {
      Json vals = Json::array();
      for (const auto& v : a.values)
        vals.push_back({{"value", v.value}, {"best", v.best}, {"median", v.median}, {"worst", v.worst},
                        {"ok", v.ok}, {"total", v.total}});
      axes.push_back({{"path", a.path}, {"values", vals}});
    }
    Json best = Json::array();
    for (const auto& b : sw.best)
      best.push_back({{"params", b.params}, {"answer", b.answer}, {"mfu", b.mfu}, {"plan", b.plan}});
    j["sweep"] = {{"name", sw.name}, {"store", sw.store}, {"each", sw.each}, {"metric", sw.metric},
                  {"points", sw.points}, {"ok", sw.ok}, {"axes", axes}, {"best", best}};
  }
  j["alternatives"] = Json::array();
  for (const auto& p : m.alternatives) j["alternatives"].push_back(PlanJson(p));
  j["assumptions"] = Json::array();
  for (const auto& a : m.assumptions)
    j["assumptions"].push_back({{"group", a.group}, {"item", a.item}, {"value", a.value}, {"source", a.source}});
  j["notes"] = m.notes;
  j["version"] = m.version;
  j["command"] = m.command;
  j["generated"] = m.generated;
  return j.dump(2);
}

}  // namespace orrery::report
