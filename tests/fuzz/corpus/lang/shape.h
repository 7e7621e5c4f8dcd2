#pragma once

namespace geo {

class Shape {
public:
    virtual ~Shape() {}
    virtual double area() const = 0;
};

// A circle of a given radius.
class Circle : public Shape {
public:
    double area() const override { return 3.14 * r_ * r_; }
    double scale(double k);

private:
    double r_;
};

}  // namespace geo
