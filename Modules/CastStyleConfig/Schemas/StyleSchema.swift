// swift-cast — Apache-2.0

extension DocumentSchema {
    /// The style schema (`urn:swift-cast:style:1`).
    static let style = DocumentSchema(
        xsd: styleXSD,
        kind: "style",
        rootElement: "castViews",
        namespace: CastStyle.namespace
    )
}

/// The XML Schema every style document is validated against before it is mapped. The `xs:documentation` of each
/// simple type is what error messages say a value "must be".
let styleXSD = #"""
    <?xml version="1.0" encoding="UTF-8"?>
    <xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"
               xmlns:s="urn:swift-cast:style:1"
               targetNamespace="urn:swift-cast:style:1"
               elementFormDefault="qualified">

      <!-- Value types -->

      <xs:simpleType name="color">
        <xs:annotation>
          <xs:documentation>a color: #RGB, #RRGGBB, #RRGGBBAA or a CSS color name like steelblue</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:token">
          <xs:pattern value="#([0-9A-Fa-f]{3}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})|[A-Za-z]+"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="font">
        <xs:annotation>
          <xs:documentation>
            a font: words among bold, italic, underline, dim, normal, a size like 18pt and a family
          </xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:string">
          <xs:minLength value="1"/>
          <xs:maxLength value="200"/>
          <xs:pattern value="\s*\S.*"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="glyph">
        <xs:annotation>
          <xs:documentation>a glyph of 1 to 16 characters, like ▶ or [play]</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:string">
          <xs:minLength value="1"/>
          <xs:maxLength value="16"/>
        </xs:restriction>
      </xs:simpleType>

      <xs:simpleType name="path">
        <xs:annotation>
          <xs:documentation>a local file path (relative paths are relative to this document)</xs:documentation>
        </xs:annotation>
        <xs:restriction base="xs:string">
          <xs:minLength value="1"/>
          <xs:pattern value="([^:]|:[^/]|:/[^/])+"/>
        </xs:restriction>
      </xs:simpleType>

      <!-- What every view may set; unset attributes inherit from the enclosing view -->

      <xs:attributeGroup name="viewAttributes">
        <xs:attribute name="backgroundColor" type="s:color"/>
        <xs:attribute name="iconTintColor" type="s:color"/>
        <xs:attribute name="headingTextColor" type="s:color"/>
        <xs:attribute name="bodyTextColor" type="s:color"/>
        <xs:attribute name="captionTextColor" type="s:color"/>
        <xs:attribute name="buttonTextColor" type="s:color"/>
        <xs:attribute name="headingTextFont" type="s:font"/>
        <xs:attribute name="bodyTextFont" type="s:font"/>
        <xs:attribute name="captionTextFont" type="s:font"/>
        <xs:attribute name="buttonTextFont" type="s:font"/>
        <xs:attribute name="progressFilledColor" type="s:color"/>
        <xs:attribute name="progressUnfilledColor" type="s:color"/>
        <xs:attribute name="progressBufferedColor" type="s:color"/>
        <xs:attribute name="progressAdMarkerColor" type="s:color"/>
      </xs:attributeGroup>

      <xs:complexType name="glyphs">
        <xs:attribute name="play" type="s:glyph"/>
        <xs:attribute name="pause" type="s:glyph"/>
        <xs:attribute name="stop" type="s:glyph"/>
        <xs:attribute name="skipNext" type="s:glyph"/>
        <xs:attribute name="skipPrevious" type="s:glyph"/>
        <xs:attribute name="rewind" type="s:glyph"/>
        <xs:attribute name="forward" type="s:glyph"/>
        <xs:attribute name="muteOn" type="s:glyph"/>
        <xs:attribute name="muteOff" type="s:glyph"/>
        <xs:attribute name="subtitles" type="s:glyph"/>
        <xs:attribute name="queue" type="s:glyph"/>
        <xs:attribute name="live" type="s:glyph"/>
        <xs:attribute name="ad" type="s:glyph"/>
        <xs:attribute name="cast" type="s:glyph"/>
        <xs:attribute name="repeatAll" type="s:glyph"/>
        <xs:attribute name="repeatOne" type="s:glyph"/>
        <xs:attribute name="repeatOff" type="s:glyph"/>
        <xs:attribute name="shuffle" type="s:glyph"/>
        <xs:attribute name="volumeUp" type="s:glyph"/>
        <xs:attribute name="volumeDown" type="s:glyph"/>
      </xs:complexType>

      <xs:complexType name="leafView">
        <xs:all>
          <xs:element name="glyphs" type="s:glyphs" minOccurs="0"/>
        </xs:all>
        <xs:attributeGroup ref="s:viewAttributes"/>
      </xs:complexType>

      <!-- The hierarchy, as GCKUIStyle's castViews -->

      <xs:element name="castViews">
        <xs:complexType>
          <xs:all>
            <xs:element name="glyphs" type="s:glyphs" minOccurs="0"/>
            <xs:element name="deviceControllers" minOccurs="0">
              <xs:complexType>
                <xs:all>
                  <xs:element name="glyphs" type="s:glyphs" minOccurs="0"/>
                  <xs:element name="castDialog" type="s:leafView" minOccurs="0"/>
                  <xs:element name="connectionController" type="s:leafView" minOccurs="0"/>
                  <xs:element name="noDevicesScreen" type="s:leafView" minOccurs="0"/>
                </xs:all>
                <xs:attributeGroup ref="s:viewAttributes"/>
              </xs:complexType>
            </xs:element>
            <xs:element name="mediaControllers" minOccurs="0">
              <xs:complexType>
                <xs:all>
                  <xs:element name="glyphs" type="s:glyphs" minOccurs="0"/>
                  <xs:element name="miniController" type="s:leafView" minOccurs="0"/>
                  <xs:element name="expandedController" type="s:leafView" minOccurs="0"/>
                  <xs:element name="queueView" type="s:leafView" minOccurs="0"/>
                </xs:all>
                <xs:attributeGroup ref="s:viewAttributes"/>
              </xs:complexType>
            </xs:element>
            <xs:element name="introductoryOverlay" type="s:leafView" minOccurs="0"/>
          </xs:all>
          <xs:attributeGroup ref="s:viewAttributes"/>
          <xs:attribute name="extends" type="s:path"/>
        </xs:complexType>
      </xs:element>
    </xs:schema>
    """#
