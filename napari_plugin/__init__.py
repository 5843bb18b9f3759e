"""napari plugin (npe2) for jungleseg: train decision jungles on painted labels in napari.

The manifest, ``napari.yaml``, names the dock widget and the sample data; the library in
``jungleseg`` never imports napari or Qt.
"""
