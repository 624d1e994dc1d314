#include "cli/transformer_cli.h"
#include "cli/run_notes.h"
#include "cli/transformer_checks.h"
#include "render/strings.h"

#include "attn/analysis/attention_analysis.h"
#include "attn/io/attention_dump.h"
#include "attn/models/transformer.h"
#include "attn/on_demand_attention.h"
#include "attn/text/token_ids.h"
#include "attn/vision/image.h"
#include "render/head_grid_render.h"
#include "render/overlay_render.h"
#include "render/token_lines_render.h"
#include "render/figure_export.h"
#include "render/heatmap_figure.h"
#include "workbenches/transformer/transformer_worker.h"

#include <QBuffer>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QGuiApplication>

#include <algorithm>
#include <cmath>
#include <charconv>
#include <cstdio>
#include <functional>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

std::optional<int> parseInt(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

std::string trimmed(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

attn::Result<RenderSpec> parseRenderSpec(std::string_view spec) {
  const std::string file = "--render";
  if (trimmed(spec) == "rollout") return RenderSpec{RenderSpec::Kind::Rollout, 0, 0};
  if (trimmed(spec).empty()) {
    return attn::fail(attn::ErrorKind::Malformed, "empty; expected layer=L,head=H, layer=L,head=mean or rollout", file,
                      0);
  }
  RenderSpec out;
  bool haveLayer = false, haveHead = false;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', pos), spec.size());
    const std::string_view item = spec.substr(pos, comma - pos);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return attn::fail(attn::ErrorKind::Malformed,
                        "expected key=value, got '" + std::string(item) + "' (keys: layer, head; or 'rollout' alone)",
                        file, std::int64_t(pos));
    }
    const std::string key = trimmed(item.substr(0, eq));
    const std::string value = trimmed(item.substr(eq + 1));
    const auto valuePos = std::int64_t(pos + eq + 1);
    if (key == "layer") {
      const auto n = parseInt(value);
      if (!n) {
        return attn::fail(attn::ErrorKind::Malformed, "layer: expected a 0-based layer number, got '" + value + "'",
                          file, valuePos);
      }
      out.layer = *n;
      haveLayer = true;
    } else if (key == "head") {
      if (value == "mean") {
        out.kind = RenderSpec::Kind::Mean;
      } else if (const auto n = parseInt(value)) {
        out.kind = RenderSpec::Kind::Head;
        out.head = *n;
      } else {
        return attn::fail(attn::ErrorKind::Malformed,
                          "head: expected a 0-based head number or 'mean', got '" + value + "'", file, valuePos);
      }
      haveHead = true;
    } else {
      return attn::fail(attn::ErrorKind::Malformed, "unknown key '" + key + "' (layer, head; or 'rollout' alone)", file,
                        std::int64_t(pos));
    }
    pos = comma + 1;
  }
  if (!haveLayer) {
    return attn::fail(attn::ErrorKind::Malformed, "give layer=L (0-based)", file, std::int64_t(spec.size()));
  }
  if (!haveHead) {
    return attn::fail(attn::ErrorKind::Malformed, "give head=H (0-based) or head=mean", file,
                      std::int64_t(spec.size()));
  }
  return out;
}

attn::Result<TileSpec> parseTileSpec(std::string_view spec) {
  const std::string file = "--tile";
  const auto bad = [&](std::size_t at, const std::string& why) {
    return attn::fail(attn::ErrorKind::Malformed, why + "; expected r0:r1,c0:c1 (0-based, end excluded)", file,
                      std::int64_t(at));
  };
  const std::size_t comma = spec.find(',');
  if (comma == std::string_view::npos) return bad(spec.size(), "no ',' between the rows and the keys");
  TileSpec out;
  const auto range = [&](std::size_t at, std::string_view part, std::int64_t& lo,
                         std::int64_t& hi) -> attn::Result<void> {
    const std::size_t colon = part.find(':');
    if (colon == std::string_view::npos) return bad(at, "no ':' in '" + std::string(part) + "'");
    const auto first = parseInt(trimmed(part.substr(0, colon)));
    const auto last = parseInt(trimmed(part.substr(colon + 1)));
    if (!first) return bad(at, "'" + std::string(part.substr(0, colon)) + "' is not a token index");
    if (!last) return bad(at + colon + 1, "'" + std::string(part.substr(colon + 1)) + "' is not a token index");
    if (*last <= *first) return bad(at, "the range " + std::string(part) + " is empty");
    lo = *first;
    hi = *last;
    return {};
  };
  if (auto rows = range(0, spec.substr(0, comma), out.r0, out.r1); !rows) return std::unexpected(rows.error());
  if (auto cols = range(comma + 1, spec.substr(comma + 1), out.c0, out.c1); !cols) {
    return std::unexpected(cols.error());
  }
  return out;
}

std::optional<TransformerView> findTransformerView(const QString& name) {
  if (name == u"matrix"_s) return TransformerView::Matrix;
  if (name == u"head"_s) return TransformerView::Head;
  if (name == u"model"_s) return TransformerView::Model;
  if (name == u"overlay"_s) return TransformerView::Overlay;
  return std::nullopt;
}

namespace {

using Step = std::expected<void, RenderFailure>;  // a step of the job that may fail
// The photo under a ViT overlay: the longer side at most this many pixels (a 10,000-pixel photo is not drawn
// at full size).
constexpr int kOverlayPhotoSide = 2048;
// The most a dump's "logits" tensor may take: 512 MiB (SmolLM2's 49,152 outputs at 2,730 tokens).
constexpr attn::Index kMaxDumpLogitsBytes = attn::Index{512} << 20;

// The spec to render (none: --out is not asked for), checked with everything else that needs no engine.
std::expected<std::optional<RenderSpec>, RenderFailure> checkJob(const TransformerJob& job) {
  std::optional<RenderSpec> spec;
  // The model view draws every layer and head, so it needs no --render; its spec (a head) only outlines one.
  const bool modelViewAlone = job.render.empty() && job.view == TransformerView::Model && !job.outPath.isEmpty();
  if (!job.render.empty() || modelViewAlone) {
    if (!job.render.empty()) {
      auto parsed = parseRenderSpec(job.render);
      if (!parsed) return std::unexpected(engineFailure(RenderFailure::Kind::Input, parsed.error()));
      spec = *parsed;
    } else {
      spec = RenderSpec{};  // layer 0's mean: a map every run has, outlined nowhere in the model view
    }
    const auto format = exportFormatFor(job.outPath);
    if (job.outPath.isEmpty() && job.csvPath.isEmpty()) {
      return std::unexpected(usageFailure(QObject::tr("--render needs --out FILE (or --csv FILE)")));
    }
    if (job.outPath.isEmpty()) return spec;
    if (!format || isMatrixFormat(*format)) {
      return std::unexpected(
          usageFailure(QObject::tr("--out %1: use a .png, .svg or .pdf file name").arg(job.outPath)));
    }
    if (job.view != TransformerView::Matrix && *format != ExportFormat::Png) {
      return std::unexpected(usageFailure(
          QObject::tr("--out %1: the head, model and overlay views are written as .png").arg(job.outPath)));
    }
    if (job.view == TransformerView::Head && spec->kind == RenderSpec::Kind::Rollout) {
      return std::unexpected(
          usageFailure(QObject::tr("--view head draws one layer: give --render layer=L,head=H or layer=L,head=mean")));
    }
  } else if (!job.outPath.isEmpty()) {
    return std::unexpected(usageFailure(
        QObject::tr("--out needs --render SPEC (layer=L,head=H | layer=L,head=mean | rollout), or --view model")));
  }
  if (!job.csvPath.isEmpty() && exportFormatFor(job.csvPath) != ExportFormat::Csv) {
    return std::unexpected(usageFailure(QObject::tr("--csv %1: use a .csv file name").arg(job.csvPath)));
  }
  if ((!job.csvPath.isEmpty() || !job.tile.empty()) && (!spec || spec->kind != RenderSpec::Kind::Head)) {
    return std::unexpected(usageFailure(QObject::tr("--csv and --tile go with --render layer=L,head=H")));
  }
  if (!job.tile.empty()) {
    if (auto tile = parseTileSpec(job.tile); !tile) {
      return std::unexpected(engineFailure(RenderFailure::Kind::Input, tile.error()));
    }
    if (job.view != TransformerView::Matrix) {
      return std::unexpected(usageFailure(QObject::tr("--tile draws the matrix view (--view matrix)")));
    }
  }
  if (!job.size.isValid() || job.size.width() < 64 || job.size.height() < 64 || job.size.width() > 16384 ||
      job.size.height() > 16384) {
    return std::unexpected(usageFailure(QObject::tr("the image size must be between 64 and 16384 pixels a side")));
  }
  return spec;
}

// A run read from a dump or made by a model: its attention, what made it (for the summary and a dump's
// header) and the photo a ViT ran on.
struct JobRun {
  std::shared_ptr<attn::models::TransformerRun> run = std::make_shared<attn::models::TransformerRun>();
  // --ablate: the same input without the ablation, for the notes' comparison (an error when it failed).
  std::optional<attn::Result<attn::models::TransformerRun>> baseline;
  QString what;
  std::string modelName;
  QImage photo;
  std::function<attn::Result<void>()> intact;  // a dump's: its mapped file unchanged (attn::io::AttentionDump)
};

// --dump-in: the dump's attention as a run; its warnings go into `report`.
std::expected<JobRun, RenderFailure> readDump(const TransformerJob& job, RenderReport& report) {
  JobRun out;
  auto dump = attn::io::read_attention_dump(toPath(job.dumpIn));
  if (!dump) return std::unexpected(engineFailure(RenderFailure::Kind::Input, dump.error()));
  for (const auto& w : dump->warnings) report.warnings.append(fromStd(w));
  out.run->attention = std::move(dump->trace);
  out.run->on_demand = std::move(dump->on_demand);  // version 2: the layers read from the mapped file
  out.run->ids = std::move(dump->ids);
  out.run->logits = std::move(dump->logits);  // written again by --dump
  out.run->special_positions = TransformerWorker::specialPositions(out.run->attention.tokens);
  out.what = QObject::tr("dump");
  out.modelName = dump->model;
  out.intact = dump->file_intact;
  return out;
}

// The model folder loaded and run on --text [--pair] or --image; its warnings go into `report`.
std::expected<JobRun, RenderFailure> runModel(const TransformerJob& job, RenderReport& report) {
  JobRun out;
  auto model = attn::models::TransformerModel::load(toPath(job.modelDir));
  if (!model) return std::unexpected(engineFailure(RenderFailure::Kind::Input, model.error()));
  const auto& config = (*model)->config();
  out.what =
      fromStd(config.family == attn::models::Family::Decoder ? config.decoder.model_type
                                                             : std::string(attn::models::to_string(config.family)));
  out.modelName = (*model)->description();
  for (const auto& w : (*model)->warnings()) report.warnings.append(fromStd(w));
  attn::models::TransformerRunner session(*model);
  attn::Result<attn::models::TransformerRun> result = attn::fail(attn::ErrorKind::OutOfRange, "no input");
  // --ablate: checked against the model before anything runs; the run then makes the edits (and, for the notes, the
  // same input runs once without them).
  attn::models::RunOptions options;
  options.keep = job.onDemand ? attn::models::RunOptions::Keep::OnDemand : attn::models::RunOptions::Keep::Auto;
  if (!job.ablate.empty()) {
    auto heads = attn::models::parse_heads(job.ablate, config);
    if (!heads) return std::unexpected(usageFailure(QObject::tr("--ablate: %1").arg(fromStd(heads.error().reason))));
    options.edits = attn::models::ablation_edits(*heads, job.ablateMode);
    options.keep = attn::models::RunOptions::Keep::Maps;
  }
  // Every dump of a model with an output head carries its logits, every position's while they take at most
  // kMaxDumpLogitsBytes (the last position's beyond: a note says so).
  if (!job.dumpOut.isEmpty() && (*model)->has_prediction_head()) options.all_logits = true;
  if (job.onDemand && config.family == attn::models::Family::Vit) {
    return std::unexpected(
        usageFailure(QObject::tr("--on-demand: a ViT keeps its attention maps (attention on demand is for text)")));
  }
  if (job.onDemand && job.generate > 0) {
    return std::unexpected(usageFailure(QObject::tr("--on-demand runs the text once; --generate keeps maps")));
  }
  if (config.family == attn::models::Family::Vit) {
    if (job.imagePath.isEmpty()) {
      return std::unexpected(usageFailure(QObject::tr("this is a vision transformer: give --image FILE")));
    }
    // The model's input and the overlay's photo (longer side at most 2048) from one decode: a big photo's
    // full-size float image is never made (attn::ImageSize).
    const int side = config.image_size;
    const attn::ImageSize sizes[] = {{.fit = attn::ImageSize::Fit::Exact, .width = side, .height = side},
                                     {.fit = attn::ImageSize::Fit::Within, .max_side = kOverlayPhotoSide}};
    auto images = attn::load_image_sizes(toPath(job.imagePath), sizes);
    if (!images) return std::unexpected(engineFailure(RenderFailure::Kind::Input, images.error()));
    const attn::Image& photo = (*images)[1];
    QImage display(photo.width, photo.height, QImage::Format_RGBX8888);
    attn::image_to_u8(photo, display.bits(), display.bytesPerLine(), 4);
    out.photo = display.convertToFormat(QImage::Format_RGB32);
    if (!options.edits.empty()) out.baseline = session.run_image((*images)[0]);
    result = session.run_image((*images)[0], options);
  } else {
    if (!job.hasText && !job.hasIds) {
      return std::unexpected(usageFailure(QObject::tr("this model reads text: give --text \"...\" (or --ids 5,17,3)")));
    }
    std::optional<std::vector<int>> ids;  // --ids: run as given, no tokenizer needed
    if (job.hasIds) {
      if (!job.pair.empty()) return std::unexpected(usageFailure(QObject::tr("--ids is one input; --pair is BERT's")));
      auto parsed = attn::text::parse_token_ids(job.ids, config.vocab_size, "--ids");
      if (!parsed) return std::unexpected(engineFailure(RenderFailure::Kind::Input, parsed.error()));
      ids = std::move(*parsed);
    }
    if (job.generate > 0) {
      if (!job.pair.empty())
        return std::unexpected(usageFailure(QObject::tr("--generate continues --text; --pair is BERT's")));
      attn::models::GenerateOptions generation = job.sampling;
      generation.max_new_tokens = job.generate;
      QElapsedTimer clock;
      clock.start();
      result = ids ? session.generate(*ids, generation) : session.generate_text(job.text, generation);
      if (result)
        report.notes << generationNote(**model, *result, double(clock.nsecsElapsed()) / 1e9) << memoryNote(*result);
    } else {
      if (auto refused = refusedBeforeForward(job, **model, ids)) return std::unexpected(*refused);
      // As the GUI: a decoder whose maps would pass 1 GiB keeps its attention on demand (then --dump writes version 2).
      const attn::Index tokens = jobTokens(job, **model, ids).value_or(0);
      if (options.all_logits && tokens * attn::Index(config.vocab_size) * 4 > kMaxDumpLogitsBytes)
        options.all_logits = false;  // the dump then says why it has no logits
      const auto run = [&](const attn::models::RunOptions& o) {
        return ids ? session.run_ids(*ids, {}, o) : session.run_text(job.text, job.pair, o);
      };
      if (!options.edits.empty()) {
        attn::models::RunOptions plain = options;
        plain.edits.clear();
        plain.all_logits = false;
        out.baseline = run(plain);
      }
      result = run(options);
    }
  }
  if (!result) {
    attn::Error error = result.error();
    if (job.hasText && !(*model)->tokenizer() && config.family != attn::models::Family::Vit) {
      error.reason += "; give token ids instead: --ids 5,17,3";
    }
    return std::unexpected(engineFailure(RenderFailure::Kind::Input, error));
  }
  *out.run = std::move(*result);
  return out;
}

// --dump: the run's attention written as a dump.
Step writeDump(const TransformerJob& job, const attn::models::TransformerRun& run, const std::string& modelName,
               RenderReport& report) {
  // A model run's token ids go with it (a dump read back has ids only when it had them).
  const std::vector<int>& ids = run.ids.size() == run.attention.tokens.size() ? run.ids : std::vector<int>{};
  // The logits ride along when the run kept every position's (ViT: its one row).
  const auto tokens = attn::Index(run.attention.tokens.size());
  const bool allLogits =
      run.logits.rows() == tokens || (run.logits.rows() == 1 && (run.grid_rows > 0 || !job.dumpIn.isEmpty()));
  const attn::Matrix* logits = allLogits ? &run.logits : nullptr;
  if (!allLogits && run.logits.rows() > 0)
    report.notes.append(QObject::tr("dump: no logits written: every position's would take %1 MB (more than %2 MB)")
                            .arg(double(tokens) * double(run.logits.cols()) * 4 / 1e6, 0, 'f', 0)
                            .arg(double(kMaxDumpLogitsBytes) / 1e6, 0, 'f', 0));
  attn::Result<void> written;
  if (run.on_demand.empty()) {
    written = attn::io::write_attention_dump(toPath(job.dumpOut), run.attention, modelName, ids, logits);
  } else {
    // Version 2: each head's overview is its whole map computed once (about a second a head at 32,768 tokens), so
    // a long run's progress goes to stderr, a line per layer.
    const int layers = int(run.on_demand.size());
    int shown = run.attention.tokens.size() >= 4096 ? 0 : layers;
    const auto progress = [&](double fraction, const std::string&) {
      const int layer = std::min(layers, int(fraction * layers + 1e-9));
      if (layer > shown) {
        std::fprintf(stderr, "dump: the overviews of %d of %d layers\n", layer, layers);
        shown = layer;
      }
      return true;
    };
    written = attn::io::write_attention_dump(toPath(job.dumpOut), run.attention, run.on_demand, modelName, ids,
                                             progress, logits);
  }
  if (!written) return std::unexpected(engineFailure(RenderFailure::Kind::Output, written.error()));
  report.written.append(job.dumpOut);
  return {};
}

using MapOrFailure = std::expected<std::shared_ptr<const attn::AttentionMap>, RenderFailure>;

// The map the spec names, its layer and head checked against the run's `layers` and `heads`.
// The spec's layer and head checked against the run's `layers` and `heads` (errors point into --render).
Step checkLayerHead(const TransformerJob& job, const RenderSpec& spec, int layers, int heads) {
  if (spec.kind != RenderSpec::Kind::Rollout) {
    const std::int64_t layerAt = std::int64_t(job.render.find("layer=")) + 6;
    if (spec.layer >= layers) {
      return std::unexpected(engineFailure(RenderFailure::Kind::Input,
                                           attn::Error{"--render", layerAt, -1,
                                                       "layer " + std::to_string(spec.layer) + " is beyond the run's " +
                                                           std::to_string(layers) + " layers (0-based)",
                                                       attn::ErrorKind::OutOfRange}));
    }
    if (spec.kind == RenderSpec::Kind::Head && spec.head >= heads) {
      const std::int64_t headAt = std::int64_t(job.render.find("head=")) + 5;
      return std::unexpected(engineFailure(RenderFailure::Kind::Input,
                                           attn::Error{"--render", headAt, -1,
                                                       "head " + std::to_string(spec.head) + " is beyond the layer's " +
                                                           std::to_string(heads) + " heads (0-based)",
                                                       attn::ErrorKind::OutOfRange}));
    }
  }
  return {};
}

MapOrFailure specMap(const TransformerJob& job, const RenderSpec& spec, const attn::LayeredTrace& trace,
                     attn::Stage stage, int layers, int heads) {
  if (auto checked = checkLayerHead(job, spec, layers, heads); !checked) return std::unexpected(checked.error());
  std::shared_ptr<const attn::AttentionMap> map;
  if (spec.kind == RenderSpec::Kind::Rollout) {
    attn::analysis::RolloutOptions options;
    options.stage = stage;
    auto rollout = attn::analysis::rollout(trace, options);
    if (!rollout) return std::unexpected(engineFailure(RenderFailure::Kind::Input, rollout.error()));
    auto m = std::make_shared<attn::AttentionMap>();
    m->stage = stage;
    m->name = "rollout";
    m->weights = std::move(*rollout);
    m->row_labels = trace.tokens;
    m->col_labels = trace.tokens;
    m->row_axis = "output tokens";
    m->col_axis = "input tokens";
    map = std::move(m);
  } else {
    map = trace.map(stage, spec.layer, spec.kind == RenderSpec::Kind::Head ? spec.head : -1, render::kMaxCellsPerSide);
  }
  if (!map) return std::unexpected(inputFailure(QObject::tr("the run has no such map")));
  return map;
}

Step savePng(const QImage& image, const QString& path) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  if (image.isNull() || !buffer.open(QIODevice::WriteOnly) || !image.save(&buffer, "PNG")) {
    return std::unexpected(
        RenderFailure{RenderFailure::Kind::Output, QObject::tr("%1: could not draw the image").arg(path)});
  }
  if (auto written = writeExport(path, bytes); !written) {
    return std::unexpected(engineFailure(RenderFailure::Kind::Output, written.error()));
  }
  return {};
}

Step renderMatrix(const TransformerJob& job, const std::shared_ptr<const attn::AttentionMap>& map) {
  render::HeatmapFigure figure;
  figure.map = map;
  figure.colormap = job.colormap;
  if (auto written = exportHeatmapFigure(figure, job.size, QGuiApplication::font(), job.outPath); !written) {
    return std::unexpected(engineFailure(RenderFailure::Kind::Output, written.error()));
  }
  return {};
}

Step renderHeadView(const TransformerJob& job, const RenderSpec& spec, const attn::LayeredTrace& trace,
                    attn::Stage stage) {
  const auto* layer = trace.find(stage, spec.layer);
  render::TokenLinesScene scene;
  scene.stack = &layer->maps;
  scene.rowTokens = &trace.tokens;
  if (spec.kind == RenderSpec::Kind::Head) {
    scene.heads = {spec.head};
  } else {
    for (int h = 0; h < layer->maps.heads(); ++h) scene.heads.push_back(h);
  }
  return savePng(
      render::tokenLinesImage(scene, job.size.width(),
                              QObject::tr("Head view \u00b7 layer %1 \u00b7 %2")
                                  .arg(spec.layer)
                                  .arg(spec.kind == RenderSpec::Kind::Head ? QObject::tr("head %1").arg(spec.head)
                                                                           : QObject::tr("all heads"))),
      job.outPath);
}

Step renderModelView(const TransformerJob& job, const RenderSpec& spec, const attn::LayeredTrace& trace,
                     attn::Stage stage) {
  const auto thumbs = render::makeThumbnails(trace, stage, TransformerWorker::kThumbnailSide);
  std::vector<QImage> tiles;
  for (const auto& pooled : thumbs.pooled) tiles.push_back(render::thumbnailImage(pooled, job.colormap));
  render::HeadGridScene scene;
  scene.tiles = &tiles;
  if (spec.kind == RenderSpec::Kind::Head) scene.selected = QPoint(spec.head, spec.layer);
  return savePng(
      render::headGridImage(scene, thumbs.layers, thumbs.heads, job.size.width(),
                            QObject::tr("Model view \u00b7 %1 layers x %2 heads").arg(thumbs.layers).arg(thumbs.heads)),
      job.outPath);
}

Step renderOverlay(const TransformerJob& job, const attn::models::TransformerRun& run, const attn::AttentionMap& map,
                   const QImage& photo) {
  if (run.grid_rows <= 0 || photo.isNull()) {
    return std::unexpected(usageFailure(QObject::tr("--view overlay is for vision transformers run on --image")));
  }
  const auto grid = render::classTokenGrid(map.weights, run.grid_rows, run.grid_cols);
  if (!grid)
    return std::unexpected(inputFailure(
        QObject::tr("the map is not class token + %1 x %2 patches").arg(run.grid_rows).arg(run.grid_cols)));
  QImage base = photo.scaled(job.size, Qt::KeepAspectRatio, Qt::SmoothTransformation);
  render::OverlayOptions options;
  options.colormap = job.colormap == render::Colormap::Viridis ? render::Colormap::Inferno : job.colormap;
  return savePng(render::overlayImage(base, *grid, options), job.outPath);
}

// --out: the view the job names, of `map` (the matrix, the overlay) or of the spec's layer and head.
Step renderView(const TransformerJob& job, const RenderSpec& spec, const JobRun& ran, attn::Stage stage,
                const std::shared_ptr<const attn::AttentionMap>& map) {
  const auto& trace = ran.run->attention;
  switch (job.view) {
    case TransformerView::Matrix: return renderMatrix(job, map);
    case TransformerView::Head: return renderHeadView(job, spec, trace, stage);
    case TransformerView::Model: return renderModelView(job, spec, trace, stage);
    case TransformerView::Overlay: return renderOverlay(job, *ran.run, *map, ran.photo);
  }
  return {};
}

// The most cells a tile may hold: 4,096 x 4,096 weights (64 MB of floats for its CSV and picture).
constexpr std::int64_t kMaxTileCells = std::int64_t{4096} * 4096;

// --tile's rows and keys checked against a run of `tokens` tokens and kMaxTileCells.
std::expected<TileSpec, RenderFailure> checkedTile(const TransformerJob& job, Index tokens) {
  const auto tile = parseTileSpec(job.tile);
  if (!tile) return std::unexpected(engineFailure(RenderFailure::Kind::Input, tile.error()));
  if (tile->r1 > tokens || tile->c1 > tokens) {
    return std::unexpected(engineFailure(
        RenderFailure::Kind::Input,
        attn::Error{"--tile", tile->r1 > tokens ? 0 : std::int64_t(job.tile.find(',') + 1), -1,
                    "the tile reaches past the run's " + std::to_string(tokens) + " tokens (0-based, end excluded)",
                    attn::ErrorKind::OutOfRange}));
  }
  if ((tile->r1 - tile->r0) * (tile->c1 - tile->c0) > kMaxTileCells) {
    return std::unexpected(
        engineFailure(RenderFailure::Kind::Input,
                      attn::Error{"--tile", 0, -1,
                                  "the tile has " + std::to_string((tile->r1 - tile->r0) * (tile->c1 - tile->c0)) +
                                      " weights, over the 16,777,216 (4,096 x 4,096) one tile may hold",
                                  attn::ErrorKind::TooLarge}));
  }
  return *tile;
}

// Rows [r0, r1) and keys [c0, c1) of a map as a map of their own, labelled with their tokens.
std::shared_ptr<attn::AttentionMap> tileOf(Matrix weights, const attn::Labels& tokens, const TileSpec& t,
                                           const std::string& what) {
  auto map = std::make_shared<attn::AttentionMap>();
  map->weights = std::move(weights);
  map->row_labels.assign(tokens.begin() + t.r0, tokens.begin() + t.r1);
  map->col_labels.assign(tokens.begin() + t.c0, tokens.begin() + t.c1);
  map->name = what + " \u00b7 rows " + std::to_string(t.r0) + "\u2013" + std::to_string(t.r1 - 1) + " \u00d7 keys " +
              std::to_string(t.c0) + "\u2013" + std::to_string(t.c1 - 1) + " (exact)";
  return map;
}

// A head kept on demand, whole, max-pooled (as the Transformer tab's long map) into at most `side` cells a side:
// each cell the largest weight of its factor x factor weights, exact (recomputed); the factor is in the title and
// on both axes. Cells are labelled by their first token.
std::shared_ptr<attn::AttentionMap> pooledOnDemand(const attn::OnDemandLayer& layer, int head,
                                                   const attn::Labels& tokens, Index side, const std::string& what) {
  const Index n = layer.tokens();
  const Index factor = std::max<Index>(1, (n + side - 1) / side);
  const Index cells = (n + factor - 1) / factor;
  std::vector<float> pooled(std::size_t(cells * cells));
  layer.pooled(head, factor, attn::OnDemandLayer::Pooling::Max, 0, cells, 0, cells, pooled.data(), cells);
  auto map = std::make_shared<attn::AttentionMap>();
  map->weights = attn::MatrixMap(pooled.data(), cells, cells);
  for (Index i = 0; i < cells; ++i) {
    const std::string label = tokens[std::size_t(i * factor)];
    map->row_labels.push_back(factor == 1 ? label : std::to_string(i * factor) + " " + label);
  }
  map->col_labels = map->row_labels;
  if (factor == 1) {
    map->name = what;
  } else {
    const std::string per = std::to_string(factor) + " \u00d7 " + std::to_string(factor);
    map->name = what + " \u00b7 max-pooled: a cell is the largest of " + per + " weights";
    // As the figure and the tab say their pooling ("keys · max-pooled, 4 per cell"); the last cell may hold fewer.
    const std::string pooled = " \u00b7 max-pooled, " + std::to_string(factor) + " per cell";
    map->row_axis = "queries" + pooled;
    map->col_axis = "keys" + pooled;
  }
  return map;
}

// --render layer=L,head=H of a run whose attention is kept on demand (a version-2 dump; a long run): the whole head
// max-pooled to the picture, or --tile's weights exactly; --csv writes what is drawn.
MapOrFailure onDemandMap(const TransformerJob& job, const RenderSpec& spec, const attn::models::TransformerRun& run) {
  const Index tokens = run.on_demand.front().tokens();
  if (auto refused = onDemandRefusal(job, spec, tokens)) return std::unexpected(*refused);
  const int layers = int(run.on_demand.size()), heads = run.on_demand.front().heads();
  if (auto checked = checkLayerHead(job, spec, layers, heads); !checked) return std::unexpected(checked.error());
  const attn::OnDemandLayer& layer = run.on_demand[std::size_t(spec.layer)];
  if (auto trusted = layer.verify(spec.head); !trusted) {
    return std::unexpected(engineFailure(RenderFailure::Kind::Input, trusted.error()));
  }
  const std::string what = "layer " + std::to_string(spec.layer) + " \u00b7 head " + std::to_string(spec.head);
  const auto& labels = run.attention.tokens;
  if (job.tile.empty()) {
    // Pooled to the figure's cells (measured with a first pooling to the picture's size), so that the figure draws
    // each pooled cell on its own pixels and need not pool the pooled map again.
    const Index side = std::min<Index>(render::kMaxCellsPerSide, std::min(job.size.width(), job.size.height()));
    auto map = pooledOnDemand(layer, spec.head, labels, side, what);
    render::HeatmapFigure probe;
    probe.map = map;
    const QSize cells = render::heatmapFigureCellPixels(QRect(QPoint(), job.size), probe, QGuiApplication::font());
    const Index fit = std::min<Index>(cells.width(), cells.height());
    if (fit > 0 && fit < map->weights.rows()) map = pooledOnDemand(layer, spec.head, labels, fit, what);
    return map;
  }
  const auto tile = checkedTile(job, tokens);
  if (!tile) return std::unexpected(tile.error());
  const Index rows = tile->r1 - tile->r0, cols = tile->c1 - tile->c0;
  std::vector<float> weights(std::size_t(rows * cols));
  layer.tile(spec.head, tile->r0, rows, tile->c0, cols, weights.data(), cols);
  return tileOf(attn::MatrixMap(weights.data(), rows, cols), labels, *tile, what);
}

// --tile of a stored map: its rows and keys, exactly.
MapOrFailure storedTile(const TransformerJob& job, const RenderSpec& spec, const attn::LayeredTrace& trace,
                        attn::Stage stage) {
  const auto whole = trace.map(stage, spec.layer, spec.head);
  if (!whole) return std::unexpected(inputFailure(QObject::tr("the run has no such map")));
  const auto tile = checkedTile(job, whole->weights.cols());
  if (!tile) return std::unexpected(tile.error());
  if (tile->r1 > whole->weights.rows()) {
    return std::unexpected(inputFailure(QObject::tr("--tile: the map has %1 rows").arg(whole->weights.rows())));
  }
  const attn::Labels& tokens = trace.tokens;
  return tileOf(whole->weights.block(tile->r0, tile->c0, tile->r1 - tile->r0, tile->c1 - tile->c0), tokens, *tile,
                whole->title());
}

// --csv: the drawn map's weights (a stored head in full, a tile, or an on-demand head's pooled cells).
Step writeCsv(const TransformerJob& job, const attn::AttentionMap& map, RenderReport& report) {
  if (job.csvPath.isEmpty()) return {};
  if (auto written = writeMatrixCsv(map, job.csvPath); !written) {
    return std::unexpected(engineFailure(RenderFailure::Kind::Output, written.error()));
  }
  report.written.append(job.csvPath);
  return {};
}

}  // namespace

std::expected<RenderReport, RenderFailure> runTransformer(const TransformerJob& job) {
  // Check everything that needs no engine first.
  const auto spec = checkJob(job);
  if (!spec) return std::unexpected(spec.error());

  QElapsedTimer timer;
  timer.start();
  RenderReport report;
  auto ran = job.dumpIn.isEmpty() ? runModel(job, report) : readDump(job, report);
  if (!ran) return std::unexpected(ran.error());
  const auto& run = ran->run;
  const auto& trace = run->attention;
  const bool onDemand = !run->on_demand.empty();
  if (trace.layers.empty() && !onDemand) {
    return std::unexpected(inputFailure(QObject::tr("the run holds no attention maps")));
  }
  const attn::Stage stage = onDemand ? (run->on_demand.front().causal() ? attn::Stage::Decoder : attn::Stage::Encoder)
                                     : trace.layers.front().stage;
  const int layers = onDemand ? int(run->on_demand.size()) : trace.layer_count(stage);
  const int heads = onDemand               ? run->on_demand.front().heads()
                    : trace.find(stage, 0) ? trace.find(stage, 0)->maps.heads()
                                           : 0;
  report.summary = QObject::tr("run: %1 \u00b7 %2 tokens \u00b7 %3 layers x %4 heads%5 \u00b7 %6 ms")
                       .arg(ran->what)
                       .arg(trace.tokens.size())
                       .arg(layers)
                       .arg(heads)
                       .arg(onDemand ? QObject::tr(" \u00b7 attention kept on demand") : QString())
                       .arg(double(timer.nsecsElapsed()) / 1e6, 0, 'f', 1);
  addRunNotes(*run, report);
  if (ran->baseline) addAblationNotes(job, *ran->baseline, *run, report);

  if (!job.dumpOut.isEmpty()) {
    if (auto written = writeDump(job, *run, ran->modelName, report); !written) return std::unexpected(written.error());
  }
  if (!*spec) return report;

  MapOrFailure map = onDemand            ? onDemandMap(job, **spec, *run)
                     : !job.tile.empty() ? storedTile(job, **spec, trace, stage)
                                         : specMap(job, **spec, trace, stage, layers, heads);
  if (!map) return std::unexpected(map.error());
  // A dump truncated by another process while its maps were read read zeros there: refused, naming the file.
  const auto changed = [&] { return ran->intact ? ran->intact() : attn::Result<void>{}; };
  if (auto ok = changed(); !ok) return std::unexpected(engineFailure(RenderFailure::Kind::Input, ok.error()));
  // The CSV of a stored head holds every weight, where its picture may be pooled.
  const auto csvMap =
      !onDemand && job.tile.empty() && !job.csvPath.isEmpty() ? trace.map(stage, (*spec)->layer, (*spec)->head) : *map;
  if (auto csv = writeCsv(job, *csvMap, report); !csv) return std::unexpected(csv.error());
  if (job.outPath.isEmpty()) return report;
  if (auto saved = renderView(job, **spec, *ran, stage, *map); !saved) return std::unexpected(saved.error());
  if (auto ok = changed(); !ok) return std::unexpected(engineFailure(RenderFailure::Kind::Input, ok.error()));
  report.written.append(job.outPath);
  return report;
}

}  // namespace attn::ui
