// Capture and edits at the four sites of a layer (hooks.h).
#include "hooks.h"

#include <algorithm>
#include <string>

namespace attn::models {

const char* site_name(Site site) {
  switch (site) {
    case Site::ResidPre: return "resid_pre";
    case Site::Z: return "z";
    case Site::AttnOut: return "attn_out";
    case Site::MlpOut: return "mlp_out";
  }
  return "?";
}

const std::vector<Matrix>& Activations::at(Site site) const {
  switch (site) {
    case Site::ResidPre: return resid_pre;
    case Site::Z: return z;
    case Site::AttnOut: return attn_out;
    case Site::MlpOut: break;
  }
  return mlp_out;
}

std::vector<Matrix>& Activations::at(Site site) {
  return const_cast<std::vector<Matrix>&>(std::as_const(*this).at(site));
}

namespace {

Index site_width(const TransformerConfig& c, Site site) {
  return site == Site::Z ? static_cast<Index>(c.heads) * c.head_dim() : static_cast<Index>(c.hidden);
}

}  // namespace

Result<void> check_edits(const TransformerConfig& c, Index tokens, const std::vector<Edit>& edits) {
  for (std::size_t i = 0; i < edits.size(); ++i) {
    const Edit& e = edits[i];
    const std::string what = "edit " + std::to_string(i) + " (" + site_name(e.site) + ")";
    if (e.layer < 0 || e.layer >= c.layers)
      return fail(ErrorKind::OutOfRange, what + ": layer " + std::to_string(e.layer) + " is outside 0.." +
                                             std::to_string(c.layers - 1) + " (the model's layers)");
    if (e.site == Site::Z && (e.head < 0 || e.head >= c.heads))
      return fail(ErrorKind::OutOfRange, what + ": head " + std::to_string(e.head) + " is outside 0.." +
                                             std::to_string(c.heads - 1) + " (the model's heads)");
    if (e.site != Site::Z && e.head != -1)
      return fail(ErrorKind::Mismatch, what + ": a head (" + std::to_string(e.head) +
                                           ") is given, but only the z site has heads; the others take whole rows");
    if (e.position < -1 || e.position >= tokens)
      return fail(ErrorKind::OutOfRange, what + ": position " + std::to_string(e.position) + " is outside 0.." +
                                             std::to_string(tokens - 1) + " (the input's tokens)");
    if (e.kind == Edit::Kind::Mean && e.site != Site::Z)
      return fail(ErrorKind::Unsupported, what + ": the mean is a head's (site z), not a whole row's");
    if (e.kind == Edit::Kind::Replace) {
      if (!e.source) return fail(ErrorKind::Mismatch, what + ": a replacement needs the values to take");
      const Index w = site_width(c, e.site);
      if (e.source->rows() != tokens || e.source->cols() != w)
        return fail(ErrorKind::Mismatch, what + ": the values to take are " + std::to_string(e.source->rows()) + " x " +
                                             std::to_string(e.source->cols()) + ", the run's are " +
                                             std::to_string(tokens) + " x " + std::to_string(w) +
                                             " (the two inputs must have the same token count)");
    }
  }
  return {};
}

Hooks::Hooks(const TransformerConfig& c, Index tokens, const std::vector<Edit>& edits, bool capture)
    : c_(c), tokens_(tokens), edits_(edits) {
  if (!capture) return;
  capture_ = std::make_shared<Activations>();
  const auto layers = static_cast<std::size_t>(c.layers);
  for (Site s : {Site::ResidPre, Site::Z, Site::AttnOut, Site::MlpOut})
    capture_->at(s).assign(layers, Matrix::Zero(tokens, width(s)));
  if (c.family == Family::Decoder) {
    const Index kv = static_cast<Index>(c.decoder.kv_heads) * c.decoder.head_dim;
    capture_->keys.assign(layers, Matrix::Zero(tokens, kv));
    capture_->values.assign(layers, Matrix::Zero(tokens, kv));
  }
}

Index Hooks::width(Site site) const { return site_width(c_, site); }

bool Hooks::at(Site site, int layer, float* rows, Index p0, Index count, Index ld) {
  const Index w = width(site);
  if (capture_) {
    Matrix& kept = capture_->at(site)[static_cast<std::size_t>(layer)];
    for (Index i = 0; i < count; ++i) kept.row(p0 + i) = Eigen::Map<const RowVector>(rows + i * ld, w);
  }
  bool edited = false;
  for (const Edit& e : edits_) {
    if (e.site != site || e.layer != layer) continue;
    if (e.position >= 0 && (e.position < p0 || e.position >= p0 + count)) continue;
    edit(e, rows, p0, count, ld);
    edited = true;
  }
  return edited;
}

void Hooks::edit(const Edit& e, float* rows, Index p0, Index count, Index ld) const {
  const Index hd = c_.head_dim();
  const Index c0 = e.site == Site::Z ? e.head * hd : 0;
  const Index cw = e.site == Site::Z ? hd : width(e.site);
  const Index lo = e.position >= 0 ? e.position : p0, hi = e.position >= 0 ? e.position + 1 : p0 + count;
  RowVector mean;
  if (e.kind == Edit::Kind::Mean) {
    // Every position of the run is here: a re-run starts at row 0 when it takes a mean (first_position).
    mean = RowVector::Zero(cw);
    for (Index i = 0; i < count; ++i) mean += Eigen::Map<const RowVector>(rows + i * ld + c0, cw);
    mean /= static_cast<float>(count);
  }
  for (Index p = lo; p < hi; ++p) {
    Eigen::Map<RowVector> row(rows + (p - p0) * ld + c0, cw);
    switch (e.kind) {
      case Edit::Kind::Zero: row.setZero(); break;
      case Edit::Kind::Mean: row = mean; break;
      case Edit::Kind::Replace: row = e.source->row(p).segment(c0, cw); break;
    }
  }
}

void Hooks::keep_cache(int layer, const float* keys, const float* values, Index capacity, Index p0, Index count) {
  if (!capture_) return;
  const Index hd = c_.decoder.head_dim, kv = c_.decoder.kv_heads;
  Matrix& k = capture_->keys[static_cast<std::size_t>(layer)];
  Matrix& v = capture_->values[static_cast<std::size_t>(layer)];
  for (Index g = 0; g < kv; ++g) {
    for (Index i = p0; i < p0 + count; ++i) {
      k.row(i).segment(g * hd, hd) = Eigen::Map<const RowVector>(keys + (g * capacity + i) * hd, hd);
      v.row(i).segment(g * hd, hd) = Eigen::Map<const RowVector>(values + (g * capacity + i) * hd, hd);
    }
  }
}

int Hooks::first_layer() const {
  int first = c_.layers;
  for (const Edit& e : edits_) first = std::min(first, e.layer);
  return first;
}

Index Hooks::first_position(bool causal) const {
  if (!causal) return 0;
  Index first = tokens_;
  for (const Edit& e : edits_) {
    if (e.position < 0 || e.kind == Edit::Kind::Mean) return 0;
    first = std::min<Index>(first, e.position);
  }
  return first;
}

bool Hooks::attention_unchanged_at_first() const {
  const int first = first_layer();
  return std::none_of(edits_.begin(), edits_.end(),
                      [&](const Edit& e) { return e.layer == first && e.site == Site::ResidPre; });
}

}  // namespace attn::models
