// Glimpse settings: the --gaussian / --stn specs (values and errors with byte offsets), the JSON file
// (round trip, the paper's form, and every strict-reading error) and what settings resolve to on an image.
#include "attn/glimpse/settings.h"

#include "attn/glimpse/convert.h"
#include "attn/glimpse/resolve.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <numbers>
#include <ostream>
#include <string>
#include <vector>

namespace attn::glimpse {
namespace {

Error gaussian_error(std::string_view spec) {
  const auto r = parse_gaussian_spec(spec, 200, 100);
  EXPECT_FALSE(r.has_value()) << spec;
  return r ? Error{} : r.error();
}

Error stn_error(std::string_view spec) {
  const auto r = parse_stn_spec(spec);
  EXPECT_FALSE(r.has_value()) << spec;
  return r ? Error{} : r.error();
}

// ---------------------------------------------------------------------------------------------------------
// --gaussian

TEST(GaussianSpec, PerAxisKeysSetExactlyTheirFields) {
  const auto g = parse_gaussian_spec("ux=1,uy=2,dx=2,dy=3,sx=0.5,sy=0.75,Nx=4,Ny=5,gamma=2", 200, 100);
  ASSERT_TRUE(g) << g.error().message();
  EXPECT_EQ(g->x, (GaussianAxis{1.0, 2.0, 0.5, 4}));
  EXPECT_EQ(g->y, (GaussianAxis{2.0, 3.0, 0.75, 5}));
  EXPECT_EQ(g->gamma, 2.0);
}

TEST(GaussianSpec, SharedKeysSetBothAxes) {
  const auto g = parse_gaussian_spec("u=10,d=2.5,s=1e-1,N=3", 200, 100);
  ASSERT_TRUE(g) << g.error().message();
  EXPECT_EQ(g->x, (GaussianAxis{10.0, 2.5, 0.1, 3}));
  EXPECT_EQ(g->y, g->x);
  EXPECT_EQ(g->gamma, 1.0);
}

TEST(GaussianSpec, CentreKeysPlaceTheWindow) {
  const auto g = parse_gaussian_spec("cx=100,cy=50,d=3,s=1.5,N=8", 200, 100);
  ASSERT_TRUE(g) << g.error().message();
  EXPECT_DOUBLE_EQ(g->x.centre(), 100.0);
  EXPECT_DOUBLE_EQ(g->y.centre(), 50.0);
  EXPECT_DOUBLE_EQ(g->x.first, 100.0 - 3.5 * 3.0);
  EXPECT_EQ(g->x.n, 8);
}

TEST(GaussianSpec, UnsetValuesComeFromTheBaseWhichKeepsItsCentre) {
  const GaussianGlimpse base = centred_glimpse(60.0, 40.0, 12, 4.0, 2.0, 0.5);
  const auto g = parse_gaussian_spec(" N = 20 , sy=3 ", 200, 100, base);
  ASSERT_TRUE(g) << g.error().message();
  EXPECT_EQ(g->x.n, 20);
  EXPECT_DOUBLE_EQ(g->x.centre(), 60.0);
  EXPECT_DOUBLE_EQ(g->y.centre(), 40.0);
  EXPECT_EQ(g->x.stride, base.x.stride);
  EXPECT_EQ(g->x.sigma, base.x.sigma);
  EXPECT_EQ(g->y.sigma, 3.0);
  EXPECT_EQ(g->gamma, 0.5);
  const auto same = parse_gaussian_spec("", 200, 100, base);
  ASSERT_TRUE(same);
  EXPECT_EQ(*same, base);
  const auto trailing = parse_gaussian_spec("d=4,", 200, 100, base);
  ASSERT_TRUE(trailing);
  EXPECT_EQ(*trailing, base);
}

TEST(GaussianSpec, ThePapersParameterisation) {
  const auto g = parse_gaussian_spec("gx~=0.2,gy~=-0.1,logsigma2=0.5,logdelta~=-1,loggamma=0.3,Nx=6,Ny=4", 200, 100);
  ASSERT_TRUE(g) << g.error().message();
  const DrawParams p{0.2, -0.1, 0.5, -1.0, 0.3, 6, 4};
  EXPECT_EQ(*g, from_draw(p, 200, 100));
  // N from the base when not given.
  GaussianGlimpse base;
  base.x.n = 7;
  base.y.n = 9;
  const auto h = parse_gaussian_spec("gx~=0,gy~=0,logsigma2=0,logdelta~=0,loggamma=0", 200, 100, base);
  ASSERT_TRUE(h);
  EXPECT_EQ(*h, from_draw(DrawParams{0, 0, 0, 0, 0, 7, 9}, 200, 100));
}

struct SpecError {
  const char* spec;
  std::int64_t offset;
  const char* reason;
};
void PrintTo(const SpecError& c, std::ostream* os) { *os << '"' << c.spec << '"'; }

class GaussianSpecError : public ::testing::TestWithParam<SpecError> {};

TEST_P(GaussianSpecError, NamesTheKeyAndItsOffset) {
  const Error e = gaussian_error(GetParam().spec);
  EXPECT_EQ(e.file, "--gaussian");
  EXPECT_EQ(e.offset, GetParam().offset);
  EXPECT_EQ(e.reason, GetParam().reason);
}

INSTANTIATE_TEST_SUITE_P(
    Specs, GaussianSpecError,
    ::testing::Values(
        SpecError{"d=3,foo=1", 4,
                  "unknown key \"foo\" (Gaussian keys: u, ux, uy, cx, cy, d, dx, dy, s, sx, sy, N, Nx, Ny, gamma; or "
                  "gx~, gy~, logsigma2, logdelta~, loggamma)"},
        SpecError{"d=abc", 2, "\"d\" needs a number, got \"abc\""},
        SpecError{" d = x1", 5, "\"d\" needs a number, got \"x1\""},
        SpecError{"s=inf", 2, "\"s\" needs a number, got \"inf\""},
        SpecError{"gamma=nan", 6, "\"gamma\" needs a number, got \"nan\""},
        SpecError{"d=1.5.2", 2, "\"d\" needs a number, got \"1.5.2\""},
        SpecError{"N=0", 2, "\"N\" needs a whole number from 1 to 1024, got \"0\""},
        SpecError{"Nx=2.5", 3, "\"Nx\" needs a whole number from 1 to 1024, got \"2.5\""},
        SpecError{"Ny=2000", 3, "\"Ny\" needs a whole number from 1 to 1024, got \"2000\""},
        SpecError{"d=3,gx~=0", 4,
                  "\"gx~\" belongs to the paper's parameterisation and cannot be mixed with the pixel one's \"d\""},
        SpecError{"loggamma=0,sx=1", 11,
                  "\"sx\" belongs to the pixel parameterisation and cannot be mixed with the paper's \"loggamma\""},
        SpecError{"N=4,gx~=0,gy~=0,logdelta~=0,loggamma=0", 4,
                  "the paper's parameterisation needs all five of gx~, gy~, logsigma2, logdelta~, loggamma; "
                  "\"logsigma2\" is missing"},
        SpecError{"u=1,ux=2", 4, "\"ux\" and \"u\" both set the first centre along x"},
        SpecError{"N=4,Ny=2", 4, "\"Ny\" and \"N\" both set the number of filters along y"},
        SpecError{"dy=1,d=2", 5, "\"d\" and \"dy\" both set the stride along y"},
        SpecError{"ux=1,cx=2", 5, "\"cx\" and \"ux\" both place the window along x"},
        SpecError{"cy=1,u=2", 5, "\"u\" and \"cy\" both place the window along y"},
        SpecError{"d=1,d=2", 4, "\"d\" is given twice"}, SpecError{"d=1, d", 5, "expected key=value, got \"d\""},
        SpecError{"=3", 0, "a value has no key before '='"}, SpecError{"s=1,d=", 6, "\"d\" has no value"}));

// ---------------------------------------------------------------------------------------------------------
// --stn

TEST(StnSpec, NoShearIsTheDefaultFamily) {
  const auto s = parse_stn_spec("sx=0.5,sy=0.25,tx=0.1,ty=-0.2,w=32,h=16");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->family, Family::NoShear);
  EXPECT_EQ(s->no_shear, (NoShear{0.5, 0.1, 0.25, -0.2}));
  EXPECT_EQ(s->out_w, 32);
  EXPECT_EQ(s->out_h, 16);
  EXPECT_EQ(s->sampler.sampling, Sampling::Bilinear);
  EXPECT_EQ(s->sampler.padding, Padding::Zeros);
  EXPECT_EQ(s->theta(200, 100), theta_of(s->no_shear));
}

TEST(StnSpec, SimilarityTakesRadiansOrDegrees) {
  auto s = parse_stn_spec("family=similarity,scale=0.5,rotation=90deg,tx=0.1,ty=0.2");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->family, Family::Similarity);
  EXPECT_DOUBLE_EQ(s->similarity.rotation, std::numbers::pi / 2);
  EXPECT_EQ(s->similarity.scale, 0.5);
  EXPECT_EQ(s->similarity.shift_y, 0.2);
  EXPECT_EQ(s->theta(200, 100), theta_of(s->similarity, 200, 100));
  // The family may come after its keys; "deg" may follow a space.
  s = parse_stn_spec("rotation=-0.25,family=similarity");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->similarity.rotation, -0.25);
  s = parse_stn_spec("family=similarity,rotation=45 deg");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_DOUBLE_EQ(s->similarity.rotation, std::numbers::pi / 4);
}

TEST(StnSpec, TranslationScaleAffineAndSampler) {
  auto s = parse_stn_spec("family=translation-scale,scale=0.5,tx=0.25,sampling=nearest,padding=border");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->translation_scale, (TranslationScale{0.5, 0.25, 0.0}));
  EXPECT_EQ(s->sampler.sampling, Sampling::Nearest);
  EXPECT_EQ(s->sampler.padding, Padding::Border);
  EXPECT_EQ(s->theta(10, 10), theta_of(s->translation_scale));

  s = parse_stn_spec("family=affine,theta=1; 0.1;0;-0.2;1;0.5");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->affine, (Theta{1, 0.1, 0, -0.2, 1, 0.5}));
  EXPECT_EQ(s->theta(10, 10), s->affine);
}

TEST(StnSpec, UnsetValuesComeFromTheBase) {
  StnSettings base;
  base.family = Family::Similarity;
  base.similarity.scale = 0.3;
  base.out_w = 12;
  const auto s = parse_stn_spec("rotation=1", base);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->family, Family::Similarity);
  EXPECT_EQ(s->similarity.scale, 0.3);
  EXPECT_EQ(s->similarity.rotation, 1.0);
  EXPECT_EQ(s->out_w, 12);
}

class StnSpecError : public ::testing::TestWithParam<SpecError> {};

TEST_P(StnSpecError, NamesTheKeyAndItsOffset) {
  const Error e = stn_error(GetParam().spec);
  EXPECT_EQ(e.file, "--stn");
  EXPECT_EQ(e.offset, GetParam().offset);
  EXPECT_EQ(e.reason, GetParam().reason);
}

INSTANTIATE_TEST_SUITE_P(
    Specs, StnSpecError,
    ::testing::Values(
        SpecError{"w=8,rotation=1", 4,
                  "\"rotation\" is not a parameter of the no-shear family (set family=similarity)"},
        SpecError{"sx=1,family=similarity", 0,
                  "\"sx\" is not a parameter of the similarity family (set family=no-shear)"},
        SpecError{"family=translation-scale,rotation=1", 25,
                  "\"rotation\" is not a parameter of the translation-scale family (set family=similarity)"},
        SpecError{"family=affine,tx=1", 14, "\"tx\" is not a parameter of the affine family (set family=no-shear)"},
        SpecError{"theta=1;0;0;0;1;0", 0, "\"theta\" is a parameter of the affine family only (set family=affine)"},
        SpecError{"family=cube", 7,
                  "\"family\" is \"cube\"; expected affine, no-shear, similarity or translation-scale"},
        SpecError{"family=affine,theta=1;2;3", 20, "\"theta\" needs six numbers a;b;c;d;e;f, got 3"},
        SpecError{"family=affine,theta=1;2;x;4;5;6", 24, "\"theta\" needs six numbers a;b;c;d;e;f; \"x\" is not one"},
        SpecError{"family=affine,theta=1;2;3;4;5;6;7", 32, "\"theta\" needs six numbers a;b;c;d;e;f, got more"},
        SpecError{"w=0", 2, "\"w\" needs a whole number from 1 to 4096, got \"0\""},
        SpecError{"h=5000", 2, "\"h\" needs a whole number from 1 to 4096, got \"5000\""},
        SpecError{"sampling=cubic", 9, "\"sampling\" is \"cubic\"; expected bilinear or nearest"},
        SpecError{"padding=mirror", 8, "\"padding\" is \"mirror\"; expected zeros or border"},
        SpecError{"family=similarity,rotation=30degrees", 27,
                  "\"rotation\" needs an angle in radians or with a \"deg\" suffix, got \"30degrees\""},
        SpecError{"sx=half", 3, "\"sx\" needs a number, got \"half\""},
        SpecError{"zoom=2", 0,
                  "unknown key \"zoom\" (STN keys: family, sx, sy, tx, ty, scale, rotation, theta, w, h, sampling, "
                  "padding)"},
        SpecError{"w=3,w=4", 4, "\"w\" is given twice"}));

// ---------------------------------------------------------------------------------------------------------
// JSON

GlimpseSettings unusual_settings() {
  GlimpseSettings s;
  s.gaussian.x = {3.25, 2.5, 1.125, 7};
  s.gaussian.y = {-4.0, 1.0 / 3.0, 0.7, 5};
  s.gaussian.gamma = 1.75;
  s.stn.family = Family::Similarity;
  s.stn.no_shear = {0.5, 0.1, 0.25, -0.3};
  s.stn.similarity = {0.4, 0.1 + 0.2, 0.05, -0.15};  // 0.30000000000000004 must survive
  s.stn.translation_scale = {0.6, -0.2, 0.125};
  s.stn.affine = {0.9, 0.1, 0.0, -0.1, 1.1, 0.2};
  s.stn.out_w = 48;
  s.stn.out_h = 24;
  s.stn.sampler = {Sampling::Nearest, Padding::Border};
  s.same_window = true;
  return s;
}

TEST(GlimpseJson, RoundTripsEveryField) {
  for (const GlimpseSettings& s : {GlimpseSettings{}, unusual_settings()}) {
    const std::string text = to_json(s, 640, 427, "photos/rocket.jpg");
    const auto back = glimpse_settings_from_json(text);
    ASSERT_TRUE(back) << back.error().message() << "\n" << text;
    EXPECT_EQ(*back, s);
  }
}

TEST(GlimpseJson, WritesTheImageThePapersFormAndTheTheta) {
  const GlimpseSettings s = unusual_settings();
  const auto j = nlohmann::json::parse(to_json(s, 640, 427, "photos/rocket.jpg"));
  EXPECT_EQ(j.at("format"), "attnscope.glimpse");
  EXPECT_EQ(j.at("version"), 1);
  EXPECT_EQ(j.at("image").at("width"), 640);
  EXPECT_EQ(j.at("image").at("height"), 427);
  EXPECT_EQ(j.at("image").at("path"), "photos/rocket.jpg");
  EXPECT_EQ(j.at("stn").at("family"), "similarity");
  const Theta theta = s.stn.theta(640, 427);
  EXPECT_EQ(j.at("stn").at("theta").get<std::vector<double>>(), std::vector<double>(theta.begin(), theta.end()));
  const DrawFit fit = to_draw(s.gaussian, 640, 427);
  const auto& draw = j.at("draw");
  EXPECT_EQ(draw.at("gx_tilde").get<double>(), fit.params.gx_tilde);
  EXPECT_EQ(draw.at("log_sigma2").get<double>(), fit.params.log_sigma2);
  EXPECT_EQ(draw.at("log_delta_tilde").get<double>(), fit.params.log_delta_tilde);
  EXPECT_EQ(draw.at("nx"), 7);
  EXPECT_EQ(draw.at("ny"), 5);
  EXPECT_EQ(draw.at("exact"), false);  // two strides and two sigmas

  GlimpseSettings iso;
  iso.gaussian = centred_glimpse(100, 80, 6, 3.0, 1.5);
  const auto k = nlohmann::json::parse(to_json(iso, 300, 200));
  EXPECT_EQ(k.at("draw").at("exact"), to_draw(iso.gaussian, 300, 200).exact);
  EXPECT_FALSE(k.at("image").contains("path"));
}

TEST(GlimpseJson, InvalidJsonHasItsOffset) {
  auto r = glimpse_settings_from_json("{\"format\": tru}", "p.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().file, "p.json");
  EXPECT_EQ(r.error().reason.rfind("not valid JSON: ", 0), 0u) << r.error().reason;
  EXPECT_GE(r.error().offset, 11);
  EXPECT_LE(r.error().offset, 15);
  r = glimpse_settings_from_json("[1, 2]", "p.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().reason, "not a JSON object");
  r = glimpse_settings_from_json("", "p.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().reason.rfind("not valid JSON", 0), 0u);
}

// Every field the reader needs, as a JSON pointer, with what it must be.
struct Field {
  const char* pointer;
  const char* expected;  // the end of the wrong-type reason
};

const std::vector<Field>& required_fields() {
  static const std::vector<Field> fields = {
      {"/gaussian", "an object"},
      {"/gaussian/x", "an object"},
      {"/gaussian/x/first", "a number"},
      {"/gaussian/x/stride", "a number"},
      {"/gaussian/x/sigma", "a number"},
      {"/gaussian/x/n", "a whole number from 1 to 1024"},
      {"/gaussian/y", "an object"},
      {"/gaussian/y/first", "a number"},
      {"/gaussian/y/stride", "a number"},
      {"/gaussian/y/sigma", "a number"},
      {"/gaussian/y/n", "a whole number from 1 to 1024"},
      {"/gaussian/gamma", "a number"},
      {"/stn", "an object"},
      {"/stn/family", "a string"},
      {"/stn/no_shear", "an object"},
      {"/stn/no_shear/scale_x", "a number"},
      {"/stn/no_shear/shift_x", "a number"},
      {"/stn/no_shear/scale_y", "a number"},
      {"/stn/no_shear/shift_y", "a number"},
      {"/stn/similarity", "an object"},
      {"/stn/similarity/scale", "a number"},
      {"/stn/similarity/rotation", "a number"},
      {"/stn/similarity/shift_x", "a number"},
      {"/stn/similarity/shift_y", "a number"},
      {"/stn/translation_scale", "an object"},
      {"/stn/translation_scale/scale", "a number"},
      {"/stn/translation_scale/shift_x", "a number"},
      {"/stn/translation_scale/shift_y", "a number"},
      {"/stn/affine", "an array of six numbers"},
      {"/stn/out_w", "a whole number from 1 to 4096"},
      {"/stn/out_h", "a whole number from 1 to 4096"},
      {"/stn/sampling", "a string"},
      {"/stn/padding", "a string"},
      {"/same_window", "true or false"},
  };
  return fields;
}

std::string dotted(std::string pointer) {
  pointer.erase(0, 1);
  for (char& c : pointer)
    if (c == '/') c = '.';
  return pointer;
}

Error read_error(const nlohmann::json& j) {
  const auto r = glimpse_settings_from_json(j.dump(), "glimpse.json");
  EXPECT_FALSE(r.has_value()) << j.dump();
  return r ? Error{} : r.error();
}

TEST(GlimpseJson, EveryMissingFieldIsNamed) {
  const auto valid = nlohmann::json::parse(to_json(unusual_settings(), 64, 64));
  for (const Field& f : required_fields()) {
    nlohmann::json j = valid;
    const nlohmann::json::json_pointer p(f.pointer);
    j[p.parent_pointer()].erase(p.back());
    const Error e = read_error(j);
    EXPECT_EQ(e.file, "glimpse.json");
    EXPECT_EQ(e.reason, "field \"" + dotted(f.pointer) + "\" is missing");
  }
}

TEST(GlimpseJson, EveryMistypedFieldIsNamed) {
  const auto valid = nlohmann::json::parse(to_json(unusual_settings(), 64, 64));
  for (const Field& f : required_fields()) {
    nlohmann::json j = valid;
    const nlohmann::json::json_pointer p(f.pointer);
    j[p] = j[p].is_string() ? nlohmann::json(1) : nlohmann::json("x");
    EXPECT_EQ(read_error(j).reason, "field \"" + dotted(f.pointer) + "\" must be " + f.expected);
  }
}

TEST(GlimpseJson, ValuesOutOfRangeOrUnknown) {
  const auto valid = nlohmann::json::parse(to_json(GlimpseSettings{}, 64, 64));
  struct Case {
    const char* pointer;
    nlohmann::json value;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"/format", "attnscope.lab", "field \"format\" is \"attnscope.lab\", not \"attnscope.glimpse\""},
      {"/format", 3, "field \"format\" must be a string"},
      {"/version", 2, "field \"version\" is 2; this program reads version 1"},
      {"/version", "1", "field \"version\" is \"1\"; this program reads version 1"},
      {"/gaussian/x/n", 0, "field \"gaussian.x.n\" must be a whole number from 1 to 1024"},
      {"/gaussian/y/n", 2.5, "field \"gaussian.y.n\" must be a whole number from 1 to 1024"},
      {"/stn/out_h", 5000, "field \"stn.out_h\" must be a whole number from 1 to 4096"},
      {"/stn/family", "cube",
       "field \"stn.family\" is \"cube\"; expected affine, no-shear, similarity or translation-scale"},
      {"/stn/sampling", "cubic", "field \"stn.sampling\" is \"cubic\"; expected bilinear or nearest"},
      {"/stn/padding", "mirror", "field \"stn.padding\" is \"mirror\"; expected zeros or border"},
      {"/stn/affine", nlohmann::json::array({1, 0, 0, 0, 1}), "field \"stn.affine\" must be an array of six numbers"},
      {"/stn/affine", nlohmann::json::array({1, 0, 0, 0, 1, "0"}),
       "field \"stn.affine\" must be an array of six numbers"},
  };
  for (const Case& c : cases) {
    nlohmann::json j = valid;
    j[nlohmann::json::json_pointer(c.pointer)] = c.value;
    EXPECT_EQ(read_error(j).reason, c.reason) << c.pointer;
  }
  for (const char* key : {"format", "version"}) {
    nlohmann::json j = valid;
    j.erase(key);
    EXPECT_EQ(read_error(j).reason, "field \"" + std::string(key) + "\" is missing");
  }
}

TEST(GlimpseJson, InformationalFieldsAreNotRequired) {
  auto j = nlohmann::json::parse(to_json(unusual_settings(), 64, 64));
  j.erase("image");
  j.erase("draw");
  j["stn"].erase("theta");
  const auto r = glimpse_settings_from_json(j.dump());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(*r, unusual_settings());
}

// ---------------------------------------------------------------------------------------------------------
// resolve: the geometry settings give on an image

TEST(ResolveGlimpse, EachFamilyGivesItsTheta) {
  GlimpseSettings s;
  s.stn.no_shear = NoShear{0.5, 0.1, 0.25, -0.2};
  s.stn.similarity = Similarity{0.75, 0.3, -0.1, 0.2};
  s.stn.translation_scale = TranslationScale{0.4, 0.3, -0.3};
  s.stn.affine = Theta{0.9, 0.1, 0.05, -0.2, 1.1, -0.05};
  s.stn.family = Family::NoShear;
  EXPECT_EQ(resolve(s, 200, 100).stn_theta, theta_of(s.stn.no_shear));
  s.stn.family = Family::Similarity;
  EXPECT_EQ(resolve(s, 200, 100).stn_theta, theta_of(s.stn.similarity, 200, 100));
  EXPECT_NE(resolve(s, 200, 100).stn_theta, resolve(s, 100, 200).stn_theta);  // corrected for the aspect
  s.stn.family = Family::TranslationScale;
  EXPECT_EQ(resolve(s, 200, 100).stn_theta, theta_of(s.stn.translation_scale));
  s.stn.family = Family::Affine;
  const ResolvedGlimpse r = resolve(s, 200, 100);
  EXPECT_EQ(r.stn_theta, s.stn.affine);
  EXPECT_FALSE(r.stn_theta_replaced);
  EXPECT_EQ(r.image_width, 200);
  EXPECT_EQ(r.image_height, 100);
  EXPECT_EQ(r.stn_width, 64);
  EXPECT_EQ(r.stn_height, 64);
}

TEST(ResolveGlimpse, SameWindowSamplesTheSanitisedGaussiansCentres) {
  const int W = 320, H = 200;
  GlimpseSettings s;
  s.gaussian = centred_glimpse(130.25, 77.5, 9, 6.5, -2.0);  // sigma is clamped; the window is not
  s.gaussian.y.n = 5;
  s.gaussian.y.stride = 11.0;
  s.stn.family = Family::Similarity;  // the STN's own parameters are kept but not used
  s.stn.similarity = Similarity{0.5, 1.0, 0.3, 0.3};
  s.stn.out_w = 17;
  s.same_window = true;
  const ResolvedGlimpse r = resolve(s, W, H);
  const GaussianGlimpse& used = r.gaussian.glimpse;
  EXPECT_EQ(r.stn_theta, theta_of(stn_of(used, W, H)));
  EXPECT_EQ(r.stn_width, 9);
  EXPECT_EQ(r.stn_height, 5);
  for (int i = 0; i < r.stn_height; ++i)
    for (int j = 0; j < r.stn_width; ++j) {
      const PixelPoint p = sample_point(r.stn_theta, i, j, r.stn_width, r.stn_height, W, H);
      EXPECT_NEAR(p.x, used.x.first + j * used.x.stride, 1e-9);
      EXPECT_NEAR(p.y, used.y.first + i * used.y.stride, 1e-9);
    }
  // Off again: the family's theta and out_w x out_h.
  s.same_window = false;
  EXPECT_EQ(resolve(s, W, H).stn_theta, theta_of(s.stn.similarity, W, H));
  EXPECT_EQ(resolve(s, W, H).stn_width, 17);
}

TEST(ResolveGlimpse, SameWindowSizeIsTheSanitisedGrid) {
  GlimpseSettings s;
  s.gaussian = centred_glimpse(50, 50, 4, 2.0, 1.0);
  s.gaussian.x.n = 0;                // clamped to 1
  s.gaussian.y.n = kMaxFilters + 5;  // clamped to kMaxFilters
  s.same_window = true;
  const ResolvedGlimpse r = resolve(s, 100, 100);
  EXPECT_EQ(r.stn_width, 1);
  EXPECT_EQ(r.stn_height, kMaxFilters);
  EXPECT_EQ(r.stn_width, r.gaussian.glimpse.x.n);
  EXPECT_EQ(r.stn_height, r.gaussian.glimpse.y.n);
  EXPECT_EQ(r.stn_theta, theta_of(stn_of(sanitise(s.gaussian, 100, 100).glimpse, 100, 100)));
}

TEST(ResolveGlimpse, OutputSizeIsClampedToOneToTheLargestSide) {
  GlimpseSettings s;
  s.stn.out_w = 0;
  s.stn.out_h = kMaxStnSide + 1;
  ResolvedGlimpse r = resolve(s, 64, 48);
  EXPECT_EQ(r.stn_width, 1);
  EXPECT_EQ(r.stn_height, kMaxStnSide);
  s.stn.out_w = -7;
  s.stn.out_h = 33;
  r = resolve(s, 64, 48);
  EXPECT_EQ(r.stn_width, 1);
  EXPECT_EQ(r.stn_height, 33);
  EXPECT_EQ(r.stn_width, s.stn.output_width());
  EXPECT_EQ(r.stn_height, s.stn.output_height());
}

TEST(ResolveGlimpse, TheGaussianIsSanitised) {
  GlimpseSettings s;
  s.gaussian = centred_glimpse(10, 10, 0, 0.0, -1.0, 0.0);
  s.gaussian.y.first = std::numeric_limits<double>::infinity();
  const ResolvedGlimpse r = resolve(s, 100, 100);
  const Sanitised expected = sanitise(s.gaussian, 100, 100);
  EXPECT_EQ(r.gaussian.glimpse, expected.glimpse);
  EXPECT_EQ(r.gaussian.glimpse.x.n, 1);
  EXPECT_EQ(r.gaussian.glimpse.x.sigma, kMinSigma);
  EXPECT_EQ(r.gaussian.glimpse.x.stride, kMinStride);
  EXPECT_EQ(r.gaussian.glimpse.gamma, kMinGamma);
  ASSERT_EQ(r.gaussian.clamps.size(), expected.clamps.size());
  for (std::size_t k = 0; k < expected.clamps.size(); ++k) {
    EXPECT_EQ(r.gaussian.clamps[k].parameter, expected.clamps[k].parameter);
    EXPECT_EQ(r.gaussian.clamps[k].used, expected.clamps[k].used);
    EXPECT_EQ(r.gaussian.clamps[k].reason, expected.clamps[k].reason);
  }
  EXPECT_FALSE(r.gaussian.outside);
  s.gaussian = centred_glimpse(-500, 50, 4, 2, 1);
  EXPECT_TRUE(resolve(s, 100, 100).gaussian.outside);
  s.gaussian = centred_glimpse(50, 50, 4, 2, 1);
  EXPECT_TRUE(resolve(s, 100, 100).gaussian.clamps.empty());
  EXPECT_EQ(resolve(s, 100, 100).gaussian.glimpse, s.gaussian);
}

TEST(ResolveGlimpse, ANonFiniteThetaBecomesTheIdentity) {
  GlimpseSettings s;
  s.stn.family = Family::Affine;
  s.stn.affine = Theta{1, 0, std::numeric_limits<double>::quiet_NaN(), 0, 1, 0};
  ResolvedGlimpse r = resolve(s, 64, 64);
  EXPECT_EQ(r.stn_theta, kIdentityTheta);
  EXPECT_TRUE(r.stn_theta_replaced);
  s.stn.family = Family::Similarity;
  s.stn.similarity.scale = std::numeric_limits<double>::infinity();
  r = resolve(s, 64, 64);
  EXPECT_EQ(r.stn_theta, kIdentityTheta);
  EXPECT_TRUE(r.stn_theta_replaced);
}

TEST(ResolveGlimpse, StnOverWindowKeepsTheRestOfTheBase) {
  StnSettings base;
  base.family = Family::Affine;
  base.similarity = Similarity{0.5, 0.2, 0.1, 0.0};
  base.sampler = SamplerOptions{Sampling::Nearest, Padding::Border};
  GaussianGlimpse g = centred_glimpse(40, 30, 6, 3.0, 1.5);
  g.x.sigma = 0.0;  // sanitised first: sigma is not in the STN, but a clamped N or stride would be
  g.y.n = 0;
  const StnSettings s = stn_over_window(g, 80, 60, base);
  const GaussianGlimpse used = sanitise(g, 80, 60).glimpse;
  EXPECT_EQ(s.family, Family::NoShear);
  EXPECT_EQ(s.no_shear, stn_of(used, 80, 60));
  EXPECT_EQ(s.out_w, 6);
  EXPECT_EQ(s.out_h, 1);
  EXPECT_EQ(s.similarity, base.similarity);
  EXPECT_EQ(s.sampler, base.sampler);
  EXPECT_EQ(s.affine, base.affine);
  // The same window same-window mode samples.
  GlimpseSettings settings;
  settings.gaussian = g;
  settings.same_window = true;
  const ResolvedGlimpse r = resolve(settings, 80, 60);
  EXPECT_EQ(r.stn_theta, s.theta(80, 60));
  EXPECT_EQ(r.stn_width, s.output_width());
  EXPECT_EQ(r.stn_height, s.output_height());
}

}  // namespace
}  // namespace attn::glimpse
