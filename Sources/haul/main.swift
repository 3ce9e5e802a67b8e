import ArgumentParser
import HaulKit
print("x")
