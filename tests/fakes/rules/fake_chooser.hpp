// SPDX-License-Identifier: Apache-2.0
#pragma once
// A Chooser (rules/init_proposal) that records each question and gives scripted answers, then
// the proposal.

#include <deque>
#include <vector>

#include "rules/init_proposal.hpp"

namespace gl::test {

class FakeChooser final : public Chooser {
 public:
  std::deque<size_t> answers;  // taken in order; when empty: the proposal
  std::vector<Choice> asked;

  size_t choose(const Choice& choice) override {
    asked.push_back(choice);
    if (answers.empty()) return choice.proposed;
    const size_t answer = answers.front();
    answers.pop_front();
    return answer;
  }
};

}  // namespace gl::test
