"""Files made from a model: the HTML report, images, the browser that draws them, the figure kinds."""
