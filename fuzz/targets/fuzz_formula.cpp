// Lab formulas: parse, list variables, evaluate with every variable bound.
#include <cstdint>
#include <string>

#include "engine/lab/formula.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return shardlab::fuzz::Guard([&] {
    const shardlab::Formula formula = shardlab::Formula::Parse(shardlab::fuzz::AsText(data, size));
    shardlab::FormulaVariables variables;
    double value = 0.5;
    for (const std::string& name : formula.Variables()) {
      variables[name] = value;
      value = value * -3.0 + 1.0;
    }
    (void)formula.Evaluate(variables);
    (void)formula.Evaluate({});  // unbound variables are an Error, not a crash
  });
}
