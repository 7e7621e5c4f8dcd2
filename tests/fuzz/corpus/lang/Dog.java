package com.ex.zoo;

import com.ex.Animal;

public class Dog extends Animal {
    /** Barks. */
    @Override
    public String sound() {
        return bark();
    }

    private String bark() {
        return "woof";
    }
}
