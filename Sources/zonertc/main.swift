print("zonertc")
