def cafÃ©():
    return "â˜ƒ"
ÿş
