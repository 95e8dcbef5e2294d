// SPDX-License-Identifier: Apache-2.0
#pragma once
// A TCP listener on 127.0.0.1 that holds a port for as long as it lives: the "port taken" fixture.

namespace gl::test {

class Listener {
 public:
  Listener();  // binds an ephemeral port
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace gl::test
