#include "engine/model/model_presets.h"

#include <gtest/gtest.h>

#include "engine/core/error.h"

namespace shardlab {
namespace {

TEST(ModelPresets, Gpt3_175bHasThePaperShape) {
  const auto& shape = FindModelPreset("gpt3-175b");
  EXPECT_EQ(shape.layers, 96);
  EXPECT_EQ(shape.hidden, 12288);
  EXPECT_EQ(shape.heads, 96);
  EXPECT_EQ(shape.seq_len, 2048);
  EXPECT_EQ(shape.vocab, 50257);
  EXPECT_EQ(shape.ffn_hidden, 4 * 12288);
}

TEST(ModelPresets, ParameterCountsMatchTheNamesWithinTwoPercent) {
  EXPECT_NEAR(FindModelPreset("gpt3-175b").TotalParameters() / 175e9, 1.0, 0.02);
  EXPECT_NEAR(FindModelPreset("gpt3-13b").TotalParameters() / 13e9, 1.0, 0.02);
  EXPECT_NEAR(FindModelPreset("gpt3-1.3b").TotalParameters() / 1.3e9, 1.0, 0.04);
  EXPECT_NEAR(FindModelPreset("llama-7b-ish").TotalParameters() / 6.7e9, 1.0, 0.03);
}

TEST(ModelPresets, LayerParametersAreTwelveHSquaredPlusThirteenH) {
  TransformerShape shape = FindModelPreset("gpt3-1.3b");
  const double h = shape.hidden;
  EXPECT_DOUBLE_EQ(shape.LayerParameters(), 12 * h * h + 13 * h);
}

TEST(ModelPresets, TrainingFlopsAreSixTimesParametersPlusAttention) {
  // Megatron-LM's count per sequence: 72·L·s·h²·(1 + s/(6h) + V/(12·L·h)).
  const auto& shape = FindModelPreset("gpt3-175b");
  const double L = shape.layers, s = shape.seq_len, h = shape.hidden, V = shape.vocab;
  const double megatron = 72 * L * s * h * h * (1 + s / (6 * h) + V / (12 * L * h));
  EXPECT_NEAR(shape.TrainingFlopsPerSequence() / megatron, 1.0, 1e-9);
}

TEST(ModelPresets, UnknownNameListsTheKnownOnes) {
  try {
    FindModelPreset("gpt5");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gpt3-175b"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'gpt5'"), std::string::npos) << e.what();
  }
}

TEST(ModelPresets, EveryPresetIsValidAndBadShapesAreNamed) {
  for (const auto& preset : ModelPresets()) EXPECT_NO_THROW(ValidateTransformerShape(preset));
  TransformerShape bad = FindModelPreset("gpt3-175b");
  bad.heads = 100;
  EXPECT_THROW(ValidateTransformerShape(bad), Error);
  bad = FindModelPreset("gpt3-175b");
  bad.layers = 0;
  try {
    ValidateTransformerShape(bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layers"), std::string::npos);
  }
}

}  // namespace
}  // namespace shardlab
