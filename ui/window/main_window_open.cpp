// MainWindow's File > Open commands: text files into the lab, images into the Glimpse or the Captioning tab,
// model folders and dumps into the tab their config.json names, each with its recent list; and openPath, which
// chooses among them for a drop and for `attnscope PATH`.
#include "window/main_window.h"

#include "window/recent_files.h"
#include "window/status_line.h"
#include "attn/io/gguf.h"
#include "attn/io/read_file.h"
#include "attn/models/transformer.h"
#include "render/strings.h"
#include "workbenches/alignment/alignment_models.h"
#include "workbenches/alignment/alignment_workbench.h"
#include "workbenches/caption/caption_models.h"
#include "workbenches/caption/caption_workbench.h"
#include "workbenches/corpus/corpus_workbench.h"
#include "workbenches/glimpse/glimpse_workbench.h"
#include "workbenches/lab/lab_workbench.h"
#include "workbenches/transformer/transformer_workbench.h"

#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

using namespace Qt::StringLiterals;

namespace attn::ui {
namespace {

// A checkpoint only the Transformer tab reads, or names the problem of: a dump, a GGUF file, a pickled or a
// pre-GGUF ggml file (the engine says how to convert those two). The Alignment and the Captioning tab would only say
// "no config.json".
bool isTransformerOnlyFile(const QString& path) {
  return TransformerWorkbench::isDumpFileName(path) || attn::io::is_gguf_name(toPath(path)) ||
         attn::models::foreign_checkpoint_message(toPath(path));
}

// What openModel takes: a folder, a *.safetensors file (it stands for its folder) or one of the above.
bool isModelPath(const QString& path) {
  return isFolderPath(path) || path.endsWith(u".safetensors"_s, Qt::CaseInsensitive) || isTransformerOnlyFile(path);
}

// A file (or, without a filter, a folder) chosen in a dialog that starts where the last one of its kind was
// chosen (`key` in QSettings, Documents the first time); empty when cancelled.
QString askForPath(QWidget* parent, const QString& key, const QString& title, const QString& filter = {}) {
  QSettings settings;
  const QString dir =
      settings.value(key, QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)).toString();
  const QString path = filter.isEmpty() ? QFileDialog::getExistingDirectory(parent, title, dir)
                                        : QFileDialog::getOpenFileName(parent, title, dir, filter);
  if (!path.isEmpty()) settings.setValue(key, QFileInfo(path).absolutePath());
  return path;
}

}  // namespace

bool MainWindow::openPath(const QString& path) {
  // By name first, so that a missing file is reported by the opener of its kind (and leaves its recent list).
  if (isSessionFileName(path) && !isFolderPath(path)) return openSession(path);
  if (isModelPath(path)) return openModel(path);
  if (CorpusWorkbench::isCorpusFileName(path)) return openCorpus(path);
  if (GlimpseWorkbench::isImageFileName(path)) return openImage(path);
  return openFile(path);
}

QStringList MainWindow::recentFiles() const { return recentFiles_->paths(); }
QStringList MainWindow::recentImages() const { return recentImages_->paths(); }
QStringList MainWindow::recentModels() const { return recentModels_->paths(); }

void MainWindow::reportMissing(RecentList* list, const QString& path, const QString& what) {
  messages_->show(nullptr,
                  list->remove(path) ? tr("%1 no longer exists; removed it from the recent %2").arg(path, what)
                                     : tr("%1 does not exist").arg(path),
                  8000);
}

bool MainWindow::openCorpus(const QString& path) {
  if (!pathExists(path)) {
    reportMissing(recentFiles_, path, tr("files"));
    return false;
  }
  showCorpus();
  recentFiles_->add(path);
  corpus_->openDatabase(path);
  return true;
}

bool MainWindow::openFile(const QString& path) {
  // std::filesystem on the path's bytes, not QFileInfo: a name that is not UTF-8 must still be found.
  if (isSessionFileName(path) && isFilePath(path)) return openSession(path);
  if (CorpusWorkbench::isCorpusFileName(path)) return openCorpus(path);
  const QString name = fileNameOf(path);
  if (!pathExists(path)) {
    reportMissing(recentFiles_, path, tr("files"));
    return false;
  }
  // Through the engine's reader: a FIFO or a device is refused by name, not waited on or read without end.
  const auto text = attn::io::read_file(toPath(path), attn::io::kMaxTextFileBytes);
  if (!text) {
    messages_->show(nullptr, tr("Cannot open %1: %2").arg(name, fromStd(text.error().reason)), 8000);
    return false;
  }
  showLab();
  recentFiles_->add(path);
  return lab_->loadText(QByteArray::fromStdString(*text), name);
}

void MainWindow::openDialog() {
  QSettings settings;
  const QString dir =
      settings.value(u"paths/open"_s, QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)).toString();
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open Text, Session or Corpus Database"), dir,
      tr("Text: first non-empty line = query, rest = source (*.txt);;AttnScope sessions (*.attnscope.json);;"
         "Corpus databases (*.sqlite *.sqlite3 *.db);;All files (*)"));
  if (path.isEmpty()) return;
  settings.setValue(u"paths/open"_s, QFileInfo(path).absolutePath());
  openFile(path);
}

bool MainWindow::openImage(const QString& path) {
  const bool caption = tabs_->currentWidget() == caption_;
  if (!caption) showGlimpse();
  if (!path.startsWith(u':') && !pathExists(path)) {
    reportMissing(recentImages_, path, tr("images"));
    return false;
  }
  messages_->show(nullptr, tr("Opening %1\u2026").arg(fileNameOf(path)), 4000);
  if (caption) {
    caption_->openFile(path);
  } else {
    glimpse_->openFile(path);
  }
  return true;
}

void MainWindow::openImageDialog() {
  QSettings settings;
  const QString dir =
      settings.value(u"paths/openImage"_s, QStandardPaths::writableLocation(QStandardPaths::PicturesLocation))
          .toString();
  const QString path = QFileDialog::getOpenFileName(
      this,
      tabs_->currentWidget() == caption_ ? tr("Open Image into the Captioning Tab")
                                         : tr("Open Image into the Glimpse Tab"),
      dir,
      tr("Images (*.png *.jpg *.jpeg *.bmp *.tif *.tiff *.webp);;PNG (*.png);;JPEG (*.jpg *.jpeg);;"
         "BMP (*.bmp);;TIFF (*.tif *.tiff);;WebP (*.webp);;All files (*)"));
  if (path.isEmpty()) return;
  settings.setValue(u"paths/openImage"_s, QFileInfo(path).absolutePath());
  openImage(path);
}

bool MainWindow::openBundledModel(const QString& key) {
  if (TransformerWorkbench::isDemoKey(key)) {
    showTransformer();
    if (transformer_->openDemo(key)) return true;
  } else if (bundledModelKeys().contains(key)) {
    showAlignment();
    alignment_->openModel(key);
    return true;
  } else if (bundledCaptionModelKeys().contains(key)) {
    showCaption();
    caption_->openModel(key);
    return true;
  }
  // A key this build does not embed (a recent entry of another build).
  messages_->show(nullptr,
                  recentModels_->remove(RecentList::bundledEntry(key))
                      ? tr("This build has no bundled model %1; removed it from the recent models").arg(key)
                      : tr("This build has no bundled model %1").arg(key),
                  8000);
  return false;
}

bool MainWindow::openModel(const QString& path) {
  // An entry of the recent models: a bundled model by its key, opened as its tab opens it.
  if (const QString key = RecentList::bundledKey(path); !key.isEmpty()) return openBundledModel(key);
  const bool exists = pathExists(path);  // the bytes of the name, not QFileInfo's "?" for a byte that is not UTF-8
  const QString architecture = exists ? folderArchitecture(path) : QString();
  const bool captioner = isCaptionArchitecture(architecture) ||
                         (architecture.isEmpty() && tabs_->currentWidget() == caption_ && !isTransformerOnlyFile(path));
  if (captioner && exists) {
    showCaption();
    messages_->show(nullptr, tr("Opening %1\u2026").arg(fileNameOf(path)), 4000);
    caption_->openModel(absolutePath(path));
    return true;
  }
  const bool alignment =
      isAlignmentArchitecture(architecture) ||
      (architecture.isEmpty() && tabs_->currentWidget() == alignment_ && !isTransformerOnlyFile(path));
  if (alignment && exists) {
    showAlignment();
    messages_->show(nullptr, tr("Opening %1\u2026").arg(fileNameOf(path)), 4000);
    alignment_->openModel(absolutePath(path));
    return true;
  }
  showTransformer();
  if (!exists && TransformerWorkbench::isDemoKey(path)) {  // a bundled demo, by name
    if (transformer_->openDemo(path)) return true;
  }
  if (!exists) {
    reportMissing(recentModels_, path, tr("models"));
    return false;
  }
  messages_->show(nullptr, tr("Opening %1\u2026").arg(fileNameOf(path)), 4000);
  transformer_->openPath(path);
  return true;
}

void MainWindow::openModelDialog() {
  const QString path = askForPath(this, u"paths/openModel"_s, tr("Open Model Folder (config.json + *.safetensors)"));
  if (!path.isEmpty()) openModel(path);
}

void MainWindow::openGgufDialog() {
  const QString path =
      askForPath(this, u"paths/openGguf"_s, tr("Open GGUF Model"), tr("GGUF models (*.gguf);;All files (*)"));
  if (!path.isEmpty()) openModel(path);
}

void MainWindow::openDumpDialog() {
  const QString path = askForPath(this, u"paths/openDump"_s, tr("Open Attention Dump"),
                                  tr("Attention dumps (*.attn.safetensors);;All files (*)"));
  if (!path.isEmpty()) openModel(path);
}

}  // namespace attn::ui
