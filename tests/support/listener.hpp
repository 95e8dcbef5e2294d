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

// A client connection to 127.0.0.1:port, established (the listener's backlog holds it) for as
// long as it lives: what a joined headless rank's engine holds.
class Connection {
 public:
  explicit Connection(int port);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  bool connected() const { return connected_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

}  // namespace gl::test
