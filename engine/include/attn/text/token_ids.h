// Token ids typed as numbers: how a model without a tokenizer (config.json and weights only) is run. The tab's
// text box takes "ids: 5 17 3"; attnscope-cli takes --ids 5,17,3. Ids are separated by commas, white space or
// both, and each must be a whole number inside the model's vocabulary; a refusal names the id's position (0-based),
// its byte in the list and the reason.
#pragma once

#include "attn/error.h"

#include <optional>
#include <string_view>
#include <vector>

namespace attn::text {

// What follows "ids:" when the text starts with it (after white space; "IDS:" too), else nullopt.
std::optional<std::string_view> token_ids_text(std::string_view text);

// "5 17 3", "5,17,3" or "5, 17, 3" -> {5, 17, 3}. `vocab_size` > 0 checks each id against [0, vocab_size). `what`
// names the list in errors ("ids", "--ids"); an error's offset is the byte of the id at fault in `list`.
Result<std::vector<int>> parse_token_ids(std::string_view list, int vocab_size, std::string_view what = "ids");

}  // namespace attn::text
