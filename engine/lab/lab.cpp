#include "engine/lab/lab.h"

#include "engine/core/toml.h"

namespace shardlab {

const LabQuestion* Lab::FindQuestion(const std::string& question_id, int* step_index) const {
  for (std::size_t s = 0; s < steps.size(); ++s) {
    for (const LabQuestion& q : steps[s].questions) {
      if (q.id == question_id) {
        if (step_index != nullptr) *step_index = static_cast<int>(s);
        return &q;
      }
    }
  }
  return nullptr;
}

int Lab::QuestionCount() const {
  int count = 0;
  for (const LabStep& step : steps) count += static_cast<int>(step.questions.size());
  return count;
}

int Lab::MaxPoints() const {
  int points = 0;
  for (const LabStep& step : steps) {
    for (const LabQuestion& q : step.questions) points += q.points;
  }
  return points;
}

const LabParam* FindLabParam(const std::vector<LabParam>& params, const std::string& name) {
  for (const LabParam& p : params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::vector<LabParam> MergeLabParams(const std::vector<LabParam>& base,
                                     const std::vector<LabParam>& overrides) {
  std::vector<LabParam> merged = base;
  for (const LabParam& o : overrides) {
    bool replaced = false;
    for (LabParam& p : merged) {
      if (p.name == o.name) {
        p = o;
        replaced = true;
      }
    }
    if (!replaced) merged.push_back(o);
  }
  return merged;
}

std::string LabParamText(const LabParam& param) {
  switch (param.type) {
    case LabParamType::kString: return param.text;
    case LabParamType::kNumber: return TomlNumber(param.number);
    case LabParamType::kBool: return param.flag ? "true" : "false";
  }
  return param.text;
}

}  // namespace shardlab
