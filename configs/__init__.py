"""The configuration presets, installed as the package ``jungleseg.configs`` so that
installed copies (the napari widget, the CLI) find them too."""
