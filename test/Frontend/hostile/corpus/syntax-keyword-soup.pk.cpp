class struct union enum template typename ;;;
