import Toy.Basic
import Toy.Interval
import Toy.Sum
