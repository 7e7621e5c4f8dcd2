def (:
  x = = 1
class
    return
	if x
  pass
lambda: (
