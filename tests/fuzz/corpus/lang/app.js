const { slug } = require('./util');

class App {
  route(title) {
    return '/' + slug(title);
  }
}

App.prototype.home = function home() {
  return this.route('home');
};

module.exports = App;
