class C:
    def m(self):
        pass

def g():
    try:
        pass
    except E:
        raise
