// `attnscope-cli attribute`: which input tokens a prediction depends on (attn/models/attribution.h) without a window.
// Runs the text (or a ViT's image) through the model, explains one target with one method, writes a CSV row per
// input token (index, token, score) and, with --out, a picture: the scores per token (and per layer for the methods
// that have a per-layer view) on a diverging scale centred on 0.
#pragma once

#include "attn/models/attribution.h"
#include "workbenches/common/render_report.h"

#include <QByteArray>
#include <QSize>
#include <QString>

#include <expected>
#include <string>
#include <vector>

namespace attn::ui {

struct AttributeJob {
  QString modelDir;
  std::string input;   // the text (raw bytes), or a ViT's image file
  std::string target;  // one token (ViT: a class name or index); empty: the model's top prediction
  int position = -1;   // -1: the last token (causal), the first [MASK] (BERT), the class token (ViT)
  attn::models::AttributeOptions options;
  QString csvPath;  // required
  QString outPath;  // .png, .svg or .pdf (optional)
  QSize size{1000, 420};
};

// "index,token,score" then one row per input token, the score last (9 significant digits); lines end in CRLF.
QByteArray attributionCsv(const attn::models::Attribution& a, const std::vector<std::string>& tokens);

// summary: "attribute: attnlrp · GPT-2 · 12 tokens · logit of \" Paris\" at 11 = 14.2 · gap 0.31 · 0.21 s"; notes: the
// tokens with the largest |score|; written: the files. A bad target, position, method for the family, step count or
// a flow input past its bound is a usage failure (exit 2).
std::expected<RenderReport, RenderFailure> runAttribute(const AttributeJob& job);

}  // namespace attn::ui
