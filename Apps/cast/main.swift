print("cast: under construction")
